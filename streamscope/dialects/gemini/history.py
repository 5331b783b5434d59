"""How a Gemini request reads: `systemInstruction`, `contents` of parts, `tools`.

A `model` content's `functionCall` parts are the calls sent back, each with its `args`
object and the `thoughtSignature` its part carries; the `functionResponse` parts of the
content after it answer them, by `id` when the call has one, else by `name` (AI Studio
sends no ids, and the API pairs results with calls by name and order).

A run of model contents is one turn: google-genai's chats keep each streamed chunk's
content as a content of its own, and send a streamed call back as the parts it came in
(opened by `willContinue`, filled by `partialArgs`, closed by an empty part). Those parts
are read back into the call they make, as the stream was: sent back as they came, the
call came back unchanged.

An id the model did not send is the client's to fill in (the API documents both ids as
optional and client-populated): one the client gave the call and its functionResponse
alike keeps the link (History.client_ids).
"""

from __future__ import annotations

from typing import Any

from ...core.history import CallIds, History, Result, SentCall, Tool, Turn, Words
from ..typed import compact
from .args import ArgTree, steps, value_of

# Whose a call's id is (the Dialect record states it; History.client_ids follows it).
IDS = CallIds(
    True,
    '`functionCall.id` and `functionResponse.id` are optional, the response\'s id "populated by the client to match the corresponding function call id" (the API reference); Gemini 2.5 sends none and clients number the calls: a filled id, the same on the call and its `functionResponse`, is `tool-call-id-filled`; an id the model sent must come back as sent',
)


WORDS = Words(
    result="functionResponse part",
    result_id="functionResponse id or name",
    sent="the model's functionCall part",
    sent_all="the model content",
    turns="Contents",
    turn="content",
    system="System instruction",
)


# Proto field names the API also takes (proto3 JSON), and that google-genai sends to Vertex
# AI for some fields, beside the JSON names: read as the JSON names.
_CAMEL = {
    "function_call": "functionCall",
    "function_response": "functionResponse",
    "thought_signature": "thoughtSignature",
    "partial_args": "partialArgs",
    "will_continue": "willContinue",
    "json_path": "jsonPath",
    "string_value": "stringValue",
    "number_value": "numberValue",
    "bool_value": "boolValue",
    "null_value": "nullValue",
}


def _camel(part: object) -> object:
    """A part with the proto names of _CAMEL as their JSON names: its own keys, its call's
    and its partialArgs' (never those of `args` or a response: the tool's own)."""
    if not isinstance(part, dict):
        return part
    out = {_CAMEL.get(k, k): v for k, v in part.items()}
    fc = out.get("functionCall")
    if isinstance(fc, dict):
        fc = {_CAMEL.get(k, k): v for k, v in fc.items()}
        if isinstance(fc.get("partialArgs"), list):
            fc["partialArgs"] = [
                {_CAMEL.get(k, k): v for k, v in a.items()} if isinstance(a, dict) else a
                for a in fc["partialArgs"]
            ]
        out["functionCall"] = fc
    return out


def _key(fid: object, name: object) -> object:
    """What a functionResponse names to answer a call: its id, else its name."""
    return fid if isinstance(fid, str) and fid else name


def _sent(fc: dict[Any, Any], signature: object, args: object) -> SentCall:
    fid = fc.get("id")
    text = compact(args) if args is not None else "{}"
    call = SentCall(
        "" if fid is None else fid,
        fc.get("name"),
        text if text is not None else args,
        "functionCall",
    )
    call.signature = signature
    # a functionResponse answers it by its id, or by its name (google-genai's
    # Part.from_function_response sends none)
    name = fc.get("name")
    call.result_keys = (fid, name) if isinstance(fid, str) and fid else (name,)
    return call


def _calls(parts: list[Any]) -> list[SentCall]:
    """The calls a model turn's functionCall parts make: whole ones as they are, streamed
    ones assembled from their parts."""
    out: list[SentCall] = []
    open_: tuple[SentCall, ArgTree] | None = None
    for part in parts:
        fc = part.get("functionCall") if isinstance(part, dict) else None
        if not isinstance(fc, dict):
            continue
        signature = part.get("thoughtSignature")
        name = fc.get("name")
        if (
            open_ is not None
            and "args" not in fc
            and (name is None or (name == open_[0].name and "partialArgs" in fc))
        ):
            call, tree = open_
            _fill(tree, fc.get("partialArgs"))
            call.arguments = tree.text()
            if call.signature is None:
                call.signature = signature
            if fc.get("willContinue") is not True:
                open_ = None
            continue
        streamed = fc.get("willContinue") is True or "partialArgs" in fc
        if not streamed:
            out.append(_sent(fc, signature, fc.get("args")))
            open_ = None
            continue
        tree = ArgTree()
        _fill(tree, fc.get("partialArgs"))
        call = _sent(fc, signature, None)
        call.arguments = tree.text()
        out.append(call)
        open_ = (call, tree) if fc.get("willContinue") is True else None
    return out


def _fill(tree: ArgTree, partial: object) -> None:
    for arg in partial if isinstance(partial, list) else ():
        if not isinstance(arg, dict):
            continue
        where, got = steps(arg.get("jsonPath")), value_of(arg)
        if isinstance(where, tuple) and not isinstance(got, str):
            tree.put(where, got[0], got[1], arg.get("willContinue") is True)


def _turn(content: object) -> Turn:
    if not isinstance(content, dict):
        return Turn("?", raw=content)
    role, parts = content.get("role"), content.get("parts")
    turn = Turn(str(role) if role is not None else "user", parts)
    if not isinstance(parts, list):
        return turn
    parts = [_camel(p) for p in parts]
    if role == "model":
        calls = _calls(parts)
        if calls:
            turn.calls = calls
            rest = [p for p in parts if not (isinstance(p, dict) and "functionCall" in p)]
            turn.content = rest or None
        return turn
    results = [
        p["functionResponse"]
        for p in parts
        if isinstance(p, dict) and isinstance(p.get("functionResponse"), dict)
    ]
    if results:
        turn.results = [
            Result(
                _key(r.get("id"), r.get("name")),
                r.get("response"),
                _failed(r),
                "error in response" if _failed(r) else "no error in response",
            )
            for r in results
        ]
        rest = [p for p in parts if not (isinstance(p, dict) and "functionResponse" in p)]
        turn.content = rest or None
    return turn


def _runs(contents: list[Any]) -> list[Turn]:
    """A turn per content, a run of model contents as one (its parts in order), and a run
    of contents that only answer calls as one."""
    runs: list[tuple[int, int, object]] = []
    for i, content in enumerate(contents):
        if runs and _model(content) and _model(runs[-1][2]):
            first, _, prev = runs[-1]
            assert isinstance(prev, dict)  # (_model said so)
            parts = [*_parts(prev), *_parts(content)]
            runs[-1] = (first, i, {**prev, "parts": parts})
        else:
            runs.append((i, i, content))
    out: list[Turn] = []
    for first, last, content in runs:
        turn = _turn(content)
        turn.items = (first, last)  # a merged run before it shifts the turn's index
        prev = out[-1] if out else None
        if prev is not None and turn.results and prev.results and turn.content is None:
            prev.results += turn.results
            prev.items = (prev.items[0] if prev.items else first, last)
            continue
        out.append(turn)
    return out


def _model(content: object) -> bool:
    return isinstance(content, dict) and content.get("role") == "model"


def _parts(content: object) -> list[Any]:
    parts = content.get("parts") if isinstance(content, dict) else None
    return parts if isinstance(parts, list) else []


def _failed(result: dict[Any, Any]) -> bool:
    """Does a functionResponse say the tool failed? Its `response` holds an `error` key
    (the API reference: \"output\" for the output, \"error\" for error details)."""
    response = result.get("response")
    return isinstance(response, dict) and "error" in response


def _tools(tools: object) -> list[Tool]:
    out: list[Tool] = []
    for tool in tools if isinstance(tools, list) else []:
        if not isinstance(tool, dict):
            continue
        decls = tool.get("functionDeclarations", tool.get("function_declarations"))
        if isinstance(decls, list):
            out += [Tool(d.get("name"), d.get("description")) for d in decls if isinstance(d, dict)]
        else:  # a built-in tool: googleSearch, codeExecution...
            out += [Tool(key) for key in tool]
    return out


def _system(value: object) -> object:
    if isinstance(value, dict) and isinstance(value.get("parts"), list):
        texts = [p.get("text") for p in value["parts"] if isinstance(p, dict)]
        strings = [t for t in texts if isinstance(t, str)]
        if texts and len(strings) == len(texts):
            return "\n".join(strings)
    return value


def history(body: object) -> History | None:
    """The request body's history; None when the body is not a JSON object."""
    if not isinstance(body, dict):
        return None
    contents = body.get("contents")
    if isinstance(contents, (str, dict)):  # one content (the REST API takes it)
        contents = [contents if isinstance(contents, dict) else {"parts": [{"text": contents}]}]
    contents = contents if isinstance(contents, list) else []
    skip = ("contents", "tools", "systemInstruction", "system_instruction")
    return History(
        _runs(contents),
        system=_system(body.get("systemInstruction", body.get("system_instruction"))),
        tools=_tools(body.get("tools")),
        params={k: v for k, v in body.items() if k not in skip},
        words=WORDS,
        kind_of=lambda kind: kind,
        items=contents,
        # FunctionCall.id and FunctionResponse.id are optional, "populated by the client to
        # match the corresponding function call id" (the API reference); Gemini 2.5 sends
        # none, and clients number the calls themselves
        client_ids=IDS.client,
        error_field="response.error",
    )
