"""How a Gemini request reads: `systemInstruction`, `contents` of parts, `tools`.

A `model` content's `functionCall` parts are the calls sent back, each with its `args`
object and the `thoughtSignature` its part carries; the `functionResponse` parts of the
content after it answer them, by `id` when the call has one, else by `name` (AI Studio
sends no ids, and the API pairs results with calls by name and order).
"""

from __future__ import annotations

from ...core.history import History, Result, SentCall, Turn, Words
from .args import compact

WORDS = Words(
    result="functionResponse part",
    result_id="functionResponse id (or name, when the call has no id)",
    sent="the model's functionCall part",
    sent_all="the model content",
    turns="Contents",
    turn="content",
    system="System instruction",
)


def _key(fid: object, name: object) -> object:
    """What a functionResponse names to answer a call: its id, else its name."""
    return fid if isinstance(fid, str) and fid else name


def sent_call(part: dict, fc: dict) -> SentCall:
    args = fc.get("args")
    text = compact(args) if args is not None else "{}"
    fid = fc.get("id")
    call = SentCall(
        "" if fid is None else fid,
        fc.get("name"),
        text if text is not None else args,
        "functionCall",
    )
    call.signature = part.get("thoughtSignature")
    call.result_key = _key(fid, fc.get("name"))
    return call


def _turn(content: object) -> Turn:
    if not isinstance(content, dict):
        return Turn("?", raw=content)
    role, parts = content.get("role"), content.get("parts")
    turn = Turn(str(role) if role is not None else "user", parts)
    if not isinstance(parts, list):
        return turn
    calls = [
        sent_call(p, p["functionCall"])
        for p in parts
        if isinstance(p, dict) and isinstance(p.get("functionCall"), dict)
    ]
    if calls and role == "model":
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
            Result(_key(r.get("id"), r.get("name")), r.get("response")) for r in results
        ]
        rest = [p for p in parts if not (isinstance(p, dict) and "functionResponse" in p)]
        turn.content = rest or None
    return turn


def _tools(tools: object) -> list[tuple[object, object]]:
    out: list[tuple[object, object]] = []
    for tool in tools if isinstance(tools, list) else []:
        if not isinstance(tool, dict):
            continue
        decls = tool.get("functionDeclarations", tool.get("function_declarations"))
        if isinstance(decls, list):
            out += [(d.get("name"), d.get("description")) for d in decls if isinstance(d, dict)]
        else:  # a built-in tool: googleSearch, codeExecution...
            out += [(key, None) for key in tool]
    return out


def _system(value: object) -> object:
    if isinstance(value, dict) and isinstance(value.get("parts"), list):
        texts = [p.get("text") for p in value["parts"] if isinstance(p, dict)]
        if texts and all(isinstance(t, str) for t in texts):
            return "\n".join(texts)
    return value


def _merged(turns: list[Turn]) -> list[Turn]:
    """Consecutive model contents as one turn, and consecutive contents of results as one:
    google-genai's chat history keeps every streamed chunk's content as a content of its
    own, and the API reads a run of them as one turn."""
    out: list[Turn] = []
    for i, turn in enumerate(turns):
        prev = out[-1] if out else None
        same = prev is not None and (
            (turn.role == prev.role == "model")
            or (turn.results and prev.results and turn.calls is None and prev.calls is None)
        )
        if not same:
            out.append(turn)
            continue
        assert prev is not None
        first = prev.items[0] if prev.items else i - 1
        merged = Turn(prev.role, _joined(prev.content, turn.content))
        if prev.calls is not None or turn.calls is not None:
            merged.calls = [*(prev.calls or []), *(turn.calls or [])]
        merged.results = [*prev.results, *turn.results]
        merged.items = (first, i)
        out[-1] = merged
    return out


def _joined(a: object, b: object) -> object:
    if a is None or b is None:
        return b if a is None else a
    if isinstance(a, list) and isinstance(b, list):
        return [*a, *b]
    return [a, b]


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
        _merged([_turn(c) for c in contents]),
        system=_system(body.get("systemInstruction", body.get("system_instruction"))),
        tools=_tools(body.get("tools")),
        params={k: v for k, v in body.items() if k not in skip},
        words=WORDS,
        kind_of=lambda kind: kind,
    )
