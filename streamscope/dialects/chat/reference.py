"""A small, portable accumulator that reads streams the way streamscope's robust reading does.

Its source is embedded in every exported pytest module as the function the user swaps
for their own client's accumulator. It works on chunk dicts (`chunk.to_dict()` of the
openai SDK's objects, or parsed JSON), keeps ids exactly as sent ("" when none), never
concatenates a repeated id or name, starts a new call when a new id arrives at an index
whose call is complete, follows a known id to another index while its call's arguments
are incomplete, attaches index-less continuations to the latest call, skips a re-sent copy
of complete arguments and takes growing snapshots as the whole text. A custom (freeform)
call's `custom.name` / `custom.input` are read as name / arguments, the input as plain text.
"""

from __future__ import annotations

# BEGIN EMBED
import json


def _complete(text):
    try:
        json.loads(text)
    except (TypeError, ValueError):
        return False
    return True


def _done(call):
    """Are the call's arguments complete? (A custom call's free-text input: once it has any.)"""
    if call["custom"]:
        return call["arguments"] != ""
    return _complete(call["arguments"])


def accumulate(chunks):
    """Tool calls from chat.completion.chunk dicts: [{"id", "name", "arguments"}, ...]
    (a custom call's input as its "arguments")."""
    calls, by_key, latest = [], {}, {}
    for chunk in chunks:
        for choice in chunk.get("choices") or []:
            c = choice.get("index", 0)
            for d in (choice.get("delta") or {}).get("tool_calls") or []:
                fn = d.get("function") or {}
                custom = not fn and isinstance(d.get("custom"), dict)
                if custom:  # a custom call: {"custom": {"name", "input"}}
                    fn = {"name": d["custom"].get("name"), "arguments": d["custom"].get("input")}
                new_id = d.get("id") if isinstance(d.get("id"), str) and d.get("id") else None
                name = (
                    fn.get("name") if isinstance(fn.get("name"), str) and fn.get("name") else None
                )
                index = d.get("index")
                call = None
                if index is None:  # no index: an id or a name starts a call, else continue
                    same = [x for x in calls if new_id and x["choice"] == c and x["id"] == new_id]
                    call = same[-1] if same else (None if new_id or name else latest.get(c))
                else:
                    call = by_key.get((c, index))
                    if new_id and (call is None or (call["id"] and new_id != call["id"])):
                        # a known id under another index continues its call while incomplete
                        same = [x for x in calls if x["choice"] == c and x["id"] == new_id]
                        if same and not _done(same[-1]) and name in (None, same[-1]["name"]):
                            call = same[-1]
                    new_call = call is not None and new_id and call["id"] and new_id != call["id"]
                    if new_call and (name or _done(call)):
                        call = None  # a new call reusing the index
                if call is None:
                    call = {"choice": c, "id": "", "name": "", "arguments": "", "custom": False}
                    calls.append(call)
                if index is not None:
                    by_key[(c, index)] = call
                latest[c] = call
                call["custom"] = call["custom"] or custom
                if new_id and not call["id"]:
                    call["id"] = new_id
                if name and name != call["name"]:
                    if not call["name"]:
                        call["name"] = name
                    elif not call["arguments"]:
                        call["name"] += name  # the name streamed in pieces
                args = fn.get("arguments")
                if isinstance(args, str) and args and call["custom"]:
                    call["arguments"] += args  # free text: never parsed
                elif isinstance(args, str) and args:
                    text = call["arguments"]
                    if (
                        text
                        and _complete(text)
                        and _complete(args)
                        and json.loads(args) == json.loads(text)
                    ):
                        continue  # the complete arguments sent again
                    if len(text) >= 2 and len(args) > len(text) and args.startswith(text):
                        call["arguments"] = args  # a growing snapshot
                    else:
                        call["arguments"] = text + args
                elif args is not None and not isinstance(args, str) and not call["arguments"]:
                    call["arguments"] = args  # a provider sent an object: kept as sent
    return [{"id": x["id"], "name": x["name"], "arguments": x["arguments"]} for x in calls]


# END EMBED


def source() -> str:
    """The embedded part of this module, as text."""
    import inspect
    import sys

    text = inspect.getsource(sys.modules[__name__])
    return text.split("# BEGIN EMBED\n", 1)[1].split("# END EMBED", 1)[0].strip() + "\n"
