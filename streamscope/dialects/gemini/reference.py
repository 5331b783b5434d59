"""A small, portable accumulator that reads Gemini chunks the way streamscope's robust
reading does.

Its source is embedded in every exported pytest module as the function the user swaps for
their own client's. It works on chunk dicts (`chunk.model_dump(mode="json",
by_alias=True, exclude_none=True)` of google-genai's responses, or parsed JSON): calls are
the `functionCall` parts of each candidate in order; a part with `willContinue` opens a
streamed call whose `partialArgs` set values by JSON path (string pieces joined), closed
by a part without `willContinue`; ids and names are kept as sent, "" when none came;
`args` absent is a call with no arguments ({}).
"""

from __future__ import annotations

# BEGIN EMBED
import re

_STEP = re.compile(r"\.([^.\[]+)|\[(\d+)\]|\['((?:[^'\\]|\\.)*)'\]|\[\"((?:[^\"\\]|\\.)*)\"\]")


def _steps(path):
    out, at = [], 1
    while at < len(path):
        m = _STEP.match(path, at)
        if m is None:
            raise ValueError(f"jsonPath {path!r} does not parse")
        name, index, single, double = m.groups()
        out.append(int(index) if index is not None else name or single or double)
        at = m.end()
    return out


def _put(root, path, value, text, pieces):
    node = root
    steps = _steps(path)
    for step, following in zip(steps, steps[1:], strict=False):
        if isinstance(node, list) and step == len(node):
            node.append({} if isinstance(following, str) else [])
        elif isinstance(node, dict) and step not in node:
            node[step] = {} if isinstance(following, str) else []
        node = node[step]
    last = steps[-1]
    if text and pieces.get(path):  # the piece before said willContinue
        node[last] += value
    elif isinstance(node, list) and last == len(node):
        node.append(value)
    else:
        node[last] = value


def _value(arg):
    for key in ("stringValue", "numberValue", "boolValue"):
        if key in arg:
            return arg[key], key == "stringValue"
    return None, False


def accumulate(chunks):
    """Tool calls from Gemini chunk dicts: [{"id", "name", "args", "thoughtSignature"}, ...]
    per candidate in order, the args as the JSON value they build."""
    calls, open_ = {}, {}
    for chunk in chunks:
        for k, cand in enumerate(chunk.get("candidates") or []):
            c = cand.get("index", k)
            for part in (cand.get("content") or {}).get("parts") or []:
                fc = part.get("functionCall")
                if fc is None:
                    continue
                call, name = open_.get(c), fc.get("name")
                named = isinstance(name, str)
                if call is None and not (
                    named or fc.get("id") or "args" in fc or "partialArgs" in fc
                ):
                    continue  # an empty closing part with no call open
                if (
                    call is None
                    or "args" in fc
                    or (named and not (name == call["name"] and "partialArgs" in fc))
                ):
                    call = {
                        "id": fc.get("id") or "",
                        "name": name or "",
                        "args": fc.get("args", {}),
                    }
                    call["thoughtSignature"] = part.get("thoughtSignature")
                    call["pieces"] = {}
                    calls.setdefault(c, []).append(call)
                    if "partialArgs" in fc or fc.get("willContinue"):
                        call["args"] = {}
                elif not call["id"] and fc.get("id"):
                    call["id"] = fc["id"]
                if call["thoughtSignature"] is None:
                    call["thoughtSignature"] = part.get("thoughtSignature")
                for arg in fc.get("partialArgs") or []:
                    value, text = _value(arg)
                    _put(call["args"], arg["jsonPath"], value, text, call["pieces"])
                    call["pieces"][arg["jsonPath"]] = text and arg.get("willContinue", False)
                open_[c] = call if fc.get("willContinue") else None
    return [
        {key: call[key] for key in ("id", "name", "args", "thoughtSignature")}
        for c in sorted(calls)
        for call in calls[c]
    ]


# END EMBED


def source() -> str:
    """The embedded part of this module, as text."""
    import inspect
    import sys

    text = inspect.getsource(sys.modules[__name__])
    return text.split("# BEGIN EMBED\n", 1)[1].split("# END EMBED", 1)[0].strip() + "\n"
