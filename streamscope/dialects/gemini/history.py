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
        "function",
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
        [_turn(c) for c in contents],
        system=_system(body.get("systemInstruction", body.get("system_instruction"))),
        tools=_tools(body.get("tools")),
        params={k: v for k, v in body.items() if k not in skip},
        words=WORDS,
        kind_of=lambda kind: kind,
    )
