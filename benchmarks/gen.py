"""Synthetic long recordings for the benchmarks (deterministic, written with the real writer)."""

from __future__ import annotations

import orjson

from streamscope.framing.aws_eventstream import encode
from streamscope.recording import RecordingWriter

TOOLS = [{"type": "function", "function": {"name": "write_file", "parameters": {"type": "object"}}}]


def _event(delta: dict, finish: str | None = None, logprobs: dict | None = None) -> bytes:
    chunk = {
        "id": "chatcmpl-bench",
        "object": "chat.completion.chunk",
        "created": 1764450000,
        "model": "bench-model",
        "system_fingerprint": "fp_bench",
        "choices": [{"index": 0, "delta": delta, "logprobs": logprobs, "finish_reason": finish}],
    }
    return b"data: " + orjson.dumps(chunk) + b"\n\n"


def stream_events(frames: int) -> list[bytes]:
    """One long tool call: an opener, argument fragments, a finish, [DONE]."""
    out = [
        _event(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "call_bench",
                        "type": "function",
                        "function": {"name": "write_file", "arguments": ""},
                    }
                ],
            }
        )
    ]
    out.append(_event({"tool_calls": [{"index": 0, "function": {"arguments": '{"text": "'}}]}))
    words = ["lorem ", "ipsum ", "dolor ", "sit ", "amet, ", "consectetur ", "adipiscing ", "elit "]
    for i in range(frames - 5):
        out.append(_event({"tool_calls": [{"index": 0, "function": {"arguments": words[i % 8]}}]}))
    out.append(_event({"tool_calls": [{"index": 0, "function": {"arguments": '"}'}}]}))
    out.append(_event({}, "tool_calls"))
    out.append(b"data: [DONE]\n\n")
    return out


_WORDS = ["lorem ", "ipsum ", "dolor ", "sit ", "amet, ", "consectetur ", "adipiscing ", "elit "]


def _token_logprobs(token: str) -> dict:
    """A chunk's `logprobs` as OpenAI sends it for `logprobs: true`."""
    entry = {"token": token, "logprob": -0.25, "bytes": list(token.encode()), "top_logprobs": []}
    return {"content": [entry], "refusal": None}


def content_events(frames: int, logprobs: bool = False) -> list[bytes]:
    """A long text answer, one word a chunk; with `logprobs`, every chunk carries its
    token's logprobs (what `logprobs: true` asks for)."""
    out = [
        _event({"role": "assistant", "content": ""}, logprobs={"content": []} if logprobs else None)
    ]
    for i in range(frames - 3):
        word = _WORDS[i % 8]
        out.append(_event({"content": word}, logprobs=_token_logprobs(word) if logprobs else None))
    out.append(_event({}, "stop"))
    out.append(b"data: [DONE]\n\n")
    return out


def _opener(index: int, name: str = "write_file") -> bytes:
    call = {"index": index, "id": f"call_{index}", "type": "function"}
    call["function"] = {"name": name, "arguments": ""}
    return _event({"tool_calls": [call]})


def _fragment(index: int, text: str, **extra: object) -> bytes:
    return _event({"tool_calls": [{"index": index, **extra, "function": {"arguments": text}}]})


# How many fragments one call sends before another call's turn: the switches are about
# 60% of the frames, as in the parallel tool use providers stream.
_BURSTS = (1, 2, 1, 1, 3)


def interleaved_events(frames: int, calls: int = 3, quirk: bool = False) -> list[bytes]:
    """`calls` parallel calls opened together, their argument fragments interleaved in
    short bursts; with `quirk`, one fragment in the middle carries `"id": ""` (the
    id-empty-overwrite of alibaba-empty-id.jsonl), for the `export --minimal` figure."""
    out = [_event({"role": "assistant", "content": None})]
    out += [_opener(i) for i in range(calls)]
    out += [_fragment(i, '{"text": "') for i in range(calls)]
    words = ["lorem ", "ipsum ", "dolor ", "sit ", "amet, ", "consectetur ", "adipiscing ", "elit "]
    body = frames - len(out) - calls - 2
    middle = body // 2
    k = turn = 0
    while k < body:
        for _ in range(_BURSTS[turn % len(_BURSTS)]):
            if k == body:
                break
            extra = {"id": ""} if quirk and k == middle else {}
            out.append(_fragment(turn % calls, words[k % 8], **extra))
            k += 1
        turn += 1
    out += [_fragment(i, '"}') for i in range(calls)]
    out.append(_event({}, "tool_calls"))
    out.append(b"data: [DONE]\n\n")
    return out


def many_calls_events(calls: int) -> list[bytes]:
    """`calls` calls one after another, each opened with id and name, its arguments in
    three fragments (what batch and map-style tools send)."""
    out = [_event({"role": "assistant", "content": None})]
    for i in range(calls):
        out.append(_opener(i))
        out += [_fragment(i, '{"i": '), _fragment(i, str(i)), _fragment(i, "}")]
    out.append(_event({}, "tool_calls"))
    out.append(b"data: [DONE]\n\n")
    return out


def single_chunk_calls_events(calls: int) -> list[bytes]:
    """`calls` calls one after another, each whole in one chunk: id, name and arguments
    (what many providers send for short calls)."""
    out = [_event({"role": "assistant", "content": None})]
    for i in range(calls):
        call = {"index": i, "id": f"call_{i}", "type": "function"}
        call["function"] = {"name": "write_file", "arguments": f'{{"i": {i}}}'}
        out.append(_event({"tool_calls": [call]}))
    out.append(_event({}, "tool_calls"))
    out.append(b"data: [DONE]\n\n")
    return out


def _anthropic(event: dict) -> bytes:
    """An event with its `event:` line (its data's type), as Anthropic and the Responses
    API send them."""
    return f"event: {event['type']}\n".encode() + b"data: " + orjson.dumps(event) + b"\n\n"


def anthropic_events(frames: int, per_block: int = 24) -> list[bytes]:
    """An Anthropic Messages stream of `frames` events: text blocks and tool blocks in
    turn, each with `per_block` fragments (`text_delta`, or `input_json_delta` after a
    first `""`), every event with its `event:` line, as the API streams a long answer
    with tool calls; the last text block takes what is left of the count."""
    start = {"id": "msg_bench", "type": "message", "role": "assistant", "model": "bench-model"}
    start.update(content=[], stop_reason=None, usage={"input_tokens": 9, "output_tokens": 1})
    out = [_anthropic({"type": "message_start", "message": start})]
    words = ["lorem ", "ipsum ", "dolor ", "sit ", "amet, ", "consectetur ", "adipiscing ", "elit "]
    index = 0
    while True:
        left = frames - len(out) - 2  # message_delta and message_stop close it
        tool = index % 2 == 1
        if left < 2 * (per_block + 2) and not tool:  # the last block: a text one
            pieces = [words[k % 8] for k in range(max(left - 2, 0))]
        elif tool:
            pieces = ["", '{"text": "', *[words[k % 8] for k in range(per_block - 3)], '"}']
        else:
            pieces = [words[k % 8] for k in range(per_block)]
        block = (
            {"type": "tool_use", "id": f"toolu_{index}", "name": "write_file", "input": {}}
            if tool
            else {"type": "text", "text": ""}
        )
        out.append(
            _anthropic({"type": "content_block_start", "index": index, "content_block": block})
        )
        for piece in pieces:
            delta = (
                {"type": "input_json_delta", "partial_json": piece}
                if tool
                else {"type": "text_delta", "text": piece}
            )
            out.append(_anthropic({"type": "content_block_delta", "index": index, "delta": delta}))
        out.append(_anthropic({"type": "content_block_stop", "index": index}))
        index += 1
        if not tool and len(pieces) != per_block:
            break
    end = {"stop_reason": "tool_use", "stop_sequence": None}
    out.append(_anthropic({"type": "message_delta", "delta": end, "usage": {"output_tokens": 5}}))
    out.append(_anthropic({"type": "message_stop"}))
    return out


BEDROCK_REQUEST = {
    "messages": [{"role": "user", "content": [{"text": "write"}]}],
    "toolConfig": {
        "tools": [{"toolSpec": {"name": "write_file", "inputSchema": {"json": {"type": "object"}}}}]
    },
}


def _bedrock(event: str, payload: dict) -> bytes:
    headers = [(":event-type", 7, event), (":content-type", 7, "application/json")]
    headers.append((":message-type", 7, "event"))
    return encode(headers, orjson.dumps({**payload, "p": "abcdefghij"}))


def bedrock_events(frames: int, per_block: int = 24) -> list[bytes]:
    """A Bedrock ConverseStream body of `frames` AWS event stream messages: text blocks
    (no contentBlockStart, as Bedrock sends them) and toolUse blocks in turn, each with
    `per_block` deltas, every payload with its `p` padding, as the API streams a long
    answer with tool calls; the last text block takes what is left of the count."""
    out = [_bedrock("messageStart", {"role": "assistant"})]
    words = ["lorem ", "ipsum ", "dolor ", "sit ", "amet, ", "consectetur ", "adipiscing ", "elit "]
    index = 0
    while True:
        left = frames - len(out) - 2  # messageStop and metadata close it
        tool = index % 2 == 1
        if left < 2 * (per_block + 2) and not tool:  # the last block: a text one
            pieces = [words[k % 8] for k in range(max(left - 1, 0))]
        elif tool:
            pieces = ['{"text": "', *[words[k % 8] for k in range(per_block - 2)], '"}']
        else:
            pieces = [words[k % 8] for k in range(per_block)]
        at = {"contentBlockIndex": index}
        if tool:
            use = {"toolUseId": f"tooluse_{index}", "name": "write_file"}
            out.append(_bedrock("contentBlockStart", {**at, "start": {"toolUse": use}}))
        for piece in pieces:
            delta = {"toolUse": {"input": piece}} if tool else {"text": piece}
            out.append(_bedrock("contentBlockDelta", {**at, "delta": delta}))
        out.append(_bedrock("contentBlockStop", at))
        index += 1
        if not tool and len(pieces) != per_block:
            break
    out.append(_bedrock("messageStop", {"stopReason": "tool_use"}))
    usage = {"inputTokens": 9, "outputTokens": 5, "totalTokens": 14}
    out.append(_bedrock("metadata", {"usage": usage, "metrics": {"latencyMs": 812}}))
    return out


def responses_events(frames: int, calls: int = 3) -> list[bytes]:
    """An OpenAI Responses API stream of `frames` events: `calls` function_call items
    added together, their argument deltas interleaved in the short bursts of
    `interleaved_events` (each naming its item), then each item's `.done` and
    `output_item.done` and the completed response; every event named, with its
    sequence_number, every delta with its `obfuscation` padding, as OpenAI streams."""
    events: list[dict] = [
        {"type": "response.created", "response": {"id": "resp_bench", "status": "in_progress"}}
    ]
    items = [
        {"id": f"fc_{i}", "type": "function_call", "call_id": f"call_{i}", "name": "write_file"}
        for i in range(calls)
    ]
    for i, item in enumerate(items):
        added = {**item, "arguments": "", "status": "in_progress"}
        events.append({"type": "response.output_item.added", "output_index": i, "item": added})
    words = ["lorem ", "ipsum ", "dolor ", "sit ", "amet, ", "consectetur ", "adipiscing ", "elit "]
    # (item, piece) in the order sent: the openers, the bursts, the closers
    order = [(i, '{"text": "') for i in range(calls)]
    body = frames - 2 - 5 * calls  # less created, completed and each item's 5 other events
    k = turn = 0
    while k < body:
        for _ in range(_BURSTS[turn % len(_BURSTS)]):
            if k == body:
                break
            order.append((turn % calls, words[k % 8]))
            k += 1
        turn += 1
    order += [(i, '"}') for i in range(calls)]
    texts: list[list[str]] = [[] for _ in range(calls)]
    for i, piece in order:
        texts[i].append(piece)
        events.append(
            {
                "type": "response.function_call_arguments.delta",
                "item_id": f"fc_{i}",
                "output_index": i,
                "delta": piece,
                "obfuscation": "x" * (16 - len(piece) % 16),
            }
        )
    done = []
    for i, item in enumerate(items):
        whole = {**item, "arguments": "".join(texts[i]), "status": "completed"}
        done.append(whole)
        events.append(
            {
                "type": "response.function_call_arguments.done",
                "item_id": f"fc_{i}",
                "output_index": i,
                "arguments": whole["arguments"],
            }
        )
        events.append({"type": "response.output_item.done", "output_index": i, "item": whole})
    response = {"id": "resp_bench", "status": "completed", "output": done}
    events.append({"type": "response.completed", "response": response})
    return [
        _anthropic({"type": e["type"], "sequence_number": n, **e}) for n, e in enumerate(events)
    ]


# A Responses API request that declares the stream's tool, as the openai SDK sends it.
def _gemini(*parts: dict, **cand: object) -> bytes:
    chunk = {
        "candidates": [{"content": {"role": "model", "parts": list(parts)}, **cand, "index": 0}],
        "modelVersion": "gemini-bench",
        "responseId": "bench",
    }
    return b"data: " + orjson.dumps(chunk) + b"\r\n\r\n"


def gemini_events(frames: int, calls: int = 3) -> list[bytes]:
    """A Gemini stream of `frames` chunks with streamed arguments (Vertex's
    streamFunctionCallArguments): `calls` calls one after the other, each opened by
    `{name, willContinue}` (the first with its thoughtSignature), its `$.text` string in
    pieces that say willContinue, a last "" piece and the empty closing part; STOP with
    usage at the end, framed by CRLF as Google sends."""
    words = ["lorem ", "ipsum ", "dolor ", "sit ", "amet, ", "consectetur ", "adipiscing ", "elit "]
    per = (frames - 1) // calls - 3  # the opener, the "" piece and the closing part
    out: list[bytes] = []
    for i in range(calls):
        opener: dict = {"functionCall": {"name": "write_file", "willContinue": True}}
        if i == 0:
            opener["thoughtSignature"] = "CiMBjz1rX25KieIB4d4AwFn8/WbsHTRNHBXso88Ptemw"
        out.append(_gemini(opener))
        left = per if i < calls - 1 else frames - 1 - len(out) - 2
        for k in range(left):
            arg = {"jsonPath": "$.text", "stringValue": words[k % 8], "willContinue": True}
            out.append(_gemini({"functionCall": {"partialArgs": [arg], "willContinue": True}}))
        last = {"jsonPath": "$.text", "stringValue": ""}
        out.append(_gemini({"functionCall": {"partialArgs": [last], "willContinue": True}}))
        out.append(_gemini({"functionCall": {}}))
    usage = {"promptTokenCount": 9, "candidatesTokenCount": frames, "totalTokenCount": frames + 9}
    out.append(
        b"data: "
        + orjson.dumps(
            {
                "candidates": [
                    {
                        "content": {"role": "model", "parts": [{"text": ""}]},
                        "finishReason": "STOP",
                        "index": 0,
                    }
                ],
                "usageMetadata": usage,
                "modelVersion": "gemini-bench",
            }
        )
        + b"\r\n\r\n"
    )
    return out


def gemini_array_events(frames: int, calls: int = 3) -> list[bytes]:
    """`gemini_events` as Gemini streams them without `alt=sse`: one JSON array, each
    element pretty-printed (two spaces) and sent in its own read, `\n,\r\n` between
    them, `\n]` after the last."""
    elements = [
        orjson.dumps(orjson.loads(e[6:-4]), option=orjson.OPT_INDENT_2)
        for e in gemini_events(frames, calls)
    ]
    out = [b"[" + elements[0]] + [b"\n,\r\n" + e for e in elements[1:]]
    out[-1] += b"\n]"
    return out


GEMINI_REQUEST = {
    "contents": [{"role": "user", "parts": [{"text": "write"}]}],
    "tools": [
        {
            "functionDeclarations": [
                {
                    "name": "write_file",
                    "parameters": {"type": "OBJECT", "properties": {"text": {"type": "STRING"}}},
                }
            ]
        }
    ],
    "toolConfig": {"functionCallingConfig": {"streamFunctionCallArguments": True}},
}


RESPONSES_REQUEST = {
    "model": "bench-model",
    "stream": True,
    "input": "write",
    "tools": [
        {
            "type": "function",
            "name": "write_file",
            "parameters": {"type": "object", "properties": {"text": {"type": "string"}}},
            "strict": False,
        }
    ],
}


def write_sse(path: str, events: list[bytes]) -> None:
    """A raw SSE body, as `curl -N` saves it."""
    with open(path, "wb") as f:
        f.writelines(events)


def write_recording(
    path: str,
    exchanges: int,
    frames: int,
    events: list[bytes] | None = None,
    url: str = "http://127.0.0.1:1/v1/chat/completions",
    request: dict | None = None,
    content_type: str = "text/event-stream",
) -> None:
    """`request`: the request body (a Chat Completions one by default); `content_type`:
    the response's."""
    body = orjson.dumps(
        request
        or {
            "model": "bench-model",
            "stream": True,
            "tools": TOOLS,
            "messages": [{"role": "user", "content": "write"}],
        }
    )
    events = stream_events(frames) if events is None else events
    with RecordingWriter(path, overwrite=True) as w:
        t = 0
        for _ in range(exchanges):
            ex = w.new_exchange()
            w.request(ex, "POST", url, [], body, t_ns=t)
            w.response(ex, 200, [("content-type", content_type)], t_ns=t + 1000)
            for e in events:
                t += 7_000_000
                w.chunk(ex, e, t_ns=t)
            w.end(ex, "complete", t_ns=t)


def _call_events(cid: str, arguments: str) -> list[bytes]:
    head = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "bench-model"}

    def chunk(delta: dict, finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return b"data: " + orjson.dumps({**head, "choices": [choice]}) + b"\n\n"

    call = {"index": 0, "id": cid, "type": "function"}
    call["function"] = {"name": "get_weather", "arguments": arguments}
    return [
        chunk({"role": "assistant", "tool_calls": [call]}),
        chunk({}, "tool_calls"),
        b"data: [DONE]\n\n",
    ]


def _text_events() -> list[bytes]:
    head = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "bench-model"}
    choice = {
        "index": 0,
        "delta": {"role": "assistant", "content": "sunny"},
        "finish_reason": "stop",
    }
    return [b"data: " + orjson.dumps({**head, "choices": [choice]}) + b"\n\n", b"data: [DONE]\n\n"]


def write_conversations(path: str, exchanges: int, at_once: int = 5, turns: int = 4) -> None:
    """`exchanges` streams of conversations `turns` long, `at_once` of them interleaved
    (each round asks them in the other order): what pairing has to untangle."""
    url = "http://127.0.0.1:1/v1/chat/completions"
    t = 0
    with RecordingWriter(path, overwrite=True) as w:
        done = 0
        batch = 0
        while done < exchanges:
            histories = [
                [{"role": "user", "content": f"question {batch}.{k}"}] for k in range(at_once)
            ]
            for turn in range(turns):
                order = range(at_once) if turn % 2 == 0 else reversed(range(at_once))
                for k in order:
                    if done == exchanges:
                        return
                    messages = histories[k]
                    cid = f"call_{batch}_{k}_{turn}"
                    body = {"model": "bench-model", "stream": True, "messages": messages}
                    ex = w.new_exchange()
                    w.request(ex, "POST", url, [], orjson.dumps(body), t_ns=t)
                    w.response(ex, 200, [("content-type", "text/event-stream")], t_ns=t + 1)
                    last = turn == turns - 1  # the answer: text, the conversation ends
                    for e in _text_events() if last else _call_events(cid, '{"city": "Paris"}'):
                        t += 1000
                        w.chunk(ex, e, t_ns=t)
                    w.end(ex, "complete", t_ns=t)
                    done += 1
                    call = {"id": cid, "type": "function"}
                    call["function"] = {"name": "get_weather", "arguments": '{"city": "Paris"}'}
                    messages += [
                        {"role": "assistant", "content": None, "tool_calls": [call]},
                        {"role": "tool", "tool_call_id": cid, "content": "15C"},
                    ]
            batch += 1


def ollama_lines(frames: int, every: int = 40) -> list[bytes]:
    """Ollama's native chat as NDJSON lines: text pieces, and every `every` lines two
    whole calls of one tool in one `done: false` line, then the `done: true` line."""
    head = {"model": "qwen3:8b", "created_at": "2026-03-02T09:14:07.412000Z"}
    words = ["lorem ", "ipsum ", "dolor ", "sit ", "amet, ", "consectetur ", "adipiscing ", "elit "]
    out = []
    for k in range(frames - 1):
        message: dict = {"role": "assistant", "content": words[k % 8]}
        if k % every == every - 1:
            fn = {
                "name": "write_file",
                "arguments": {"path": f"notes/{k}.md", "text": "lorem ipsum"},
            }
            message = {"role": "assistant", "content": "", "tool_calls": [{"function": fn}] * 2}
        out.append(orjson.dumps({**head, "message": message, "done": False}) + b"\n")
    last = {"role": "assistant", "content": ""}
    out.append(orjson.dumps({**head, "message": last, "done": True, "done_reason": "stop"}) + b"\n")
    return out


def chat_lines(frames: int) -> list[bytes]:
    """`interleaved_events` as a chunk log: one chunk a line (no [DONE])."""
    return [e[len(b"data: ") :].strip() + b"\n" for e in interleaved_events(frames + 1)[:-1]]


# -- the shapes `--minimal` once grew on: a quirk in the middle or everywhere --


def interleaved_every_events(frames: int, calls: int = 3) -> list[bytes]:
    """`interleaved_events` with `"id": ""` on every continuation fragment (a gateway that
    blanks the id of every delta after the first: id-empty-overwrite at each)."""
    out = [_event({"role": "assistant", "content": None})]
    out += [_opener(i) for i in range(calls)]
    body = frames - len(out) - 2 * calls - 2
    out += [_fragment(i, '{"text": "', id="") for i in range(calls)]
    k = turn = 0
    while k < body:
        for _ in range(_BURSTS[turn % len(_BURSTS)]):
            if k == body:
                break
            out.append(_fragment(turn % calls, _WORDS[k % 8], id=""))
            k += 1
        turn += 1
    out += [_fragment(i, '"}', id="") for i in range(calls)]
    out.append(_event({}, "tool_calls"))
    out.append(b"data: [DONE]\n\n")
    return out


def single_chunk_truncated_events(calls: int, bad: int = 777) -> list[bytes]:
    """`single_chunk_calls_events` with call `bad`'s arguments cut short (`{"i": 777`:
    args-invalid-json on that call alone, in the middle of the stream)."""
    out = single_chunk_calls_events(calls)
    call = {"index": bad, "id": f"call_{bad}", "type": "function"}
    call["function"] = {"name": "write_file", "arguments": f'{{"i": {bad}'}
    out[1 + bad] = _event({"tool_calls": [call]})
    return out


def anthropic_tool_blocks_events(blocks: int, bad: int | None = None) -> list[bytes]:
    """An Anthropic Messages stream of `blocks` tool_use blocks one after another, each
    start, three `input_json_delta`s and stop; block `bad` (the middle one by default)
    has its input cut short (args-invalid-json on it alone)."""
    bad = blocks // 2 if bad is None else bad
    start = {"id": "msg_bench", "type": "message", "role": "assistant", "model": "bench-model"}
    start.update(content=[], stop_reason=None, usage={"input_tokens": 9, "output_tokens": 1})
    out = [_anthropic({"type": "message_start", "message": start})]
    for i in range(blocks):
        block = {"type": "tool_use", "id": f"toolu_{i}", "name": "write_file", "input": {}}
        out.append(_anthropic({"type": "content_block_start", "index": i, "content_block": block}))
        pieces = ['{"i": ', str(i), "" if i == bad else "}"]
        for piece in pieces:
            delta = {"type": "input_json_delta", "partial_json": piece}
            out.append(_anthropic({"type": "content_block_delta", "index": i, "delta": delta}))
        out.append(_anthropic({"type": "content_block_stop", "index": i}))
    end = {"stop_reason": "tool_use", "stop_sequence": None}
    out.append(_anthropic({"type": "message_delta", "delta": end, "usage": {"output_tokens": 5}}))
    out.append(_anthropic({"type": "message_stop"}))
    return out


def gemini_partial_calls_events(chunks: int, per_call: int = 6) -> list[bytes]:
    """A Gemini stream of about `chunks` chunks of streamed arguments: calls one after
    another, each its opener, `per_call - 3` `partialArgs` pieces, a last "" piece and
    its closing part; the middle call's opener carries no name (a quirk in the middle)."""
    calls = max((chunks - 1) // per_call, 1)
    bad = calls // 2
    out: list[bytes] = []
    for i in range(calls):
        opener: dict = {"functionCall": {"name": "write_file", "willContinue": True}}
        if i == bad:
            del opener["functionCall"]["name"]
        out.append(_gemini(opener))
        for k in range(per_call - 3):
            arg = {"jsonPath": "$.text", "stringValue": _WORDS[k % 8], "willContinue": True}
            out.append(_gemini({"functionCall": {"partialArgs": [arg], "willContinue": True}}))
        last = {"jsonPath": "$.text", "stringValue": ""}
        out.append(_gemini({"functionCall": {"partialArgs": [last], "willContinue": True}}))
        out.append(_gemini({"functionCall": {}}))
    stop = {"content": {"role": "model", "parts": [{"text": ""}]}, "finishReason": "STOP"}
    chunk = {"candidates": [{**stop, "index": 0}], "modelVersion": "gemini-bench"}
    out.append(b"data: " + orjson.dumps(chunk) + b"\r\n\r\n")
    return out


def gemini_candidates_chunk(n: int) -> list[bytes]:
    """One Gemini chunk of `n` candidates, each with its own call (the replay's frame
    detail once drew all of them on every key)."""
    candidates = [
        {
            "index": i,
            "content": {
                "role": "model",
                "parts": [{"functionCall": {"name": f"f{i}", "args": {}}}],
            },
            "finishReason": "STOP",
        }
        for i in range(n)
    ]
    return [b"data: " + orjson.dumps({"candidates": candidates}) + b"\r\n\r\n"]


# -- the same shapes in the other wires (issue 38: "the same shapes in the new wires") --


def bedrock_tool_blocks_events(blocks: int, bad: int | None = None) -> list[bytes]:
    """`anthropic_tool_blocks_events` as Bedrock's ConverseStream sends it (AWS event
    stream messages): `blocks` toolUse blocks, each start, three input deltas and stop,
    block `bad` (the middle one by default) with its input cut short."""
    bad = blocks // 2 if bad is None else bad
    out = [_bedrock("messageStart", {"role": "assistant"})]
    for i in range(blocks):
        at = {"contentBlockIndex": i}
        use = {"toolUseId": f"tooluse_{i}", "name": "write_file"}
        out.append(_bedrock("contentBlockStart", {**at, "start": {"toolUse": use}}))
        for piece in ['{"i": ', str(i), "" if i == bad else "}"]:
            out.append(
                _bedrock("contentBlockDelta", {**at, "delta": {"toolUse": {"input": piece}}})
            )
        out.append(_bedrock("contentBlockStop", at))
    out.append(_bedrock("messageStop", {"stopReason": "tool_use"}))
    usage = {"inputTokens": 9, "outputTokens": 5, "totalTokens": 14}
    out.append(_bedrock("metadata", {"usage": usage, "metrics": {"latencyMs": 812}}))
    return out


def _function_call_events(calls: int, bad: int, realtime: bool) -> list[dict]:
    """One response's events, Responses API or Realtime: `calls` function_call items one
    after another (added, three argument deltas, done, item done), item `bad`'s arguments
    cut short (its deltas and its done alike)."""
    kind = "realtime.response" if realtime else "response"
    events: list[dict] = [
        {
            "type": "response.created",
            "response": {"id": "resp_b", "object": kind, "status": "in_progress"},
        }
    ]
    done = []
    for i in range(calls):
        item = {
            "id": f"fc_{i}",
            "type": "function_call",
            "call_id": f"call_{i}",
            "name": "write_file",
        }
        at = {"output_index": i}
        if realtime:
            at["response_id"] = "resp_b"
        events.append(
            {
                "type": "response.output_item.added",
                **at,
                "item": {**item, "arguments": "", "status": "in_progress"},
            }
        )
        pieces = ['{"i": ', str(i), "" if i == bad else "}"]
        ids = {"item_id": f"fc_{i}", **at, **({"call_id": f"call_{i}"} if realtime else {})}
        for piece in pieces:
            events.append({"type": "response.function_call_arguments.delta", **ids, "delta": piece})
        whole = {**item, "arguments": "".join(pieces), "status": "completed"}
        events.append(
            {
                "type": "response.function_call_arguments.done",
                **ids,
                "arguments": whole["arguments"],
            }
        )
        events.append({"type": "response.output_item.done", **at, "item": whole})
        done.append(whole)
    response = {"id": "resp_b", "object": kind, "status": "completed", "output": done}
    events.append(
        {"type": "response.done" if realtime else "response.completed", "response": response}
    )
    return events


def responses_calls_events(calls: int) -> list[bytes]:
    """`_function_call_events` as a Responses API SSE body: every event named, with its
    sequence_number, item `calls // 2` cut short."""
    events = _function_call_events(calls, calls // 2, realtime=False)
    return [
        _anthropic({"type": e["type"], "sequence_number": n, **e}) for n, e in enumerate(events)
    ]


def write_websocket_recording(path: str, url: str, client: list[dict], server: list[dict]) -> None:
    """One WebSocket session: the client's messages, then the server's, as text frames."""
    with RecordingWriter(path, overwrite=True) as w:
        ex, t = w.new_exchange(), 0
        headers = [("upgrade", "websocket"), ("connection", "Upgrade")]
        w.request(ex, "GET", url, headers, b"", t_ns=t)
        w.response(ex, 101, headers, t_ns=t + 1000)
        for sender, events in (("client", client), ("server", server)):
            for e in events:
                t += 1_000_000
                w.message(ex, sender, 1, True, orjson.dumps(e), t_ns=t)
        w.end(ex, "complete", t_ns=t)


def write_responses_websocket(path: str, calls: int) -> None:
    """A Responses API session over WebSocket (as Codex runs it): one response.create,
    then `_function_call_events`, each event with its sequence_number."""
    create = {
        "type": "response.create",
        **{k: v for k, v in RESPONSES_REQUEST.items() if k != "stream"},
    }
    events = _function_call_events(calls, calls // 2, realtime=False)
    events = [{"type": e["type"], "sequence_number": n, **e} for n, e in enumerate(events)]
    write_websocket_recording(path, "ws://127.0.0.1:1/v1/responses", [create], events)


def write_realtime_websocket(path: str, calls: int) -> None:
    """A Realtime session: session.update declaring the tool, response.create, then
    `_function_call_events` with event ids."""
    tool = {k: v for k, v in RESPONSES_REQUEST["tools"][0].items() if k != "strict"}  # type: ignore[index]
    update = {"type": "session.update", "session": {"type": "realtime", "tools": [tool]}}
    events = _function_call_events(calls, calls // 2, realtime=True)
    events = [{"type": e["type"], "event_id": f"event_{n}", **e} for n, e in enumerate(events)]
    url = "ws://127.0.0.1:1/v1/realtime?model=gpt-realtime"
    write_websocket_recording(path, url, [update, {"type": "response.create"}], events)


def ollama_calls_lines(calls: int, bad: int | None = None) -> list[bytes]:
    """Ollama's native chat as NDJSON: `calls` lines each one whole call, call `bad` (the
    middle one) with no name, then the `done: true` line."""
    bad = calls // 2 if bad is None else bad
    head = {"model": "qwen3:8b", "created_at": "2026-03-02T09:14:07.412000Z"}
    out = []
    for i in range(calls):
        fn: dict = {"name": "write_file", "arguments": {"i": i}}
        if i == bad:
            del fn["name"]
        message = {"role": "assistant", "content": "", "tool_calls": [{"function": fn}]}
        out.append(orjson.dumps({**head, "message": message, "done": False}) + b"\n")
    last = {"role": "assistant", "content": ""}
    out.append(orjson.dumps({**head, "message": last, "done": True, "done_reason": "stop"}) + b"\n")
    return out


def gemini_partial_calls_array(chunks: int) -> list[bytes]:
    """`gemini_partial_calls_events` as one JSON array (no `alt=sse`), as
    `gemini_array_events` writes it."""
    elements = [
        orjson.dumps(orjson.loads(e[6:].strip()), option=orjson.OPT_INDENT_2)
        for e in gemini_partial_calls_events(chunks)
    ]
    out = [b"[" + elements[0]] + [b"\n,\r\n" + e for e in elements[1:]]
    out[-1] += b"\n]"
    return out
