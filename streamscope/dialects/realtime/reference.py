"""A small, portable accumulator that reads OpenAI Realtime server events the way
streamscope's robust reading does.

Its source is embedded in every exported pytest module as the function the user swaps for
their own client's. It works on event dicts (`event.to_dict()` of the openai SDK's
realtime events, or parsed JSON): a call is a `function_call` output item, found by its
`id` (what the argument events name as `item_id`), else by its `output_index` in the
response; its arguments are the item's own text plus its deltas, unless a later event
states the whole value (`.done`, `output_item.done`, `response.done`'s output): then that
value, except an empty one. Ids and names are kept exactly as sent, "" when none came;
the call_id is the one a function_call_output must echo.
"""

from __future__ import annotations

# BEGIN EMBED
CALL = "function_call"


def accumulate(events):
    """Function calls from Realtime server event dicts: [{"call_id", "item_id", "name",
    "arguments"}, ...], the arguments as text."""
    calls, at, by_id = [], {}, {}

    def new(index, item):
        text = item.get("arguments")
        call = {
            # an id or name that is no string is none
            "call_id": item["call_id"] if isinstance(item.get("call_id"), str) else "",
            "item_id": item.get("id"),
            "name": item["name"] if isinstance(item.get("name"), str) else "",
            "parts": [text if isinstance(text, str) else ""],
            "stated": None,
            "open": True,
        }
        calls.append(call)
        at[index] = call
        if isinstance(item.get("id"), str):
            by_id[item["id"]] = call
        return call

    def find(event):
        item_id, index = event.get("item_id"), event.get("output_index")
        if isinstance(item_id, str) and item_id in by_id:
            return by_id[item_id]
        return at.get(index) if type(index) is int else None

    def state(call, value, whole=None, keys=("call_id", "name")):
        # a whole value counts until the item is done (output_item.done: its last word);
        # an id or name the item's record states replaces the one held until then, and
        # fills one never given (an empty one never counts)
        if call is None:
            return
        for key in keys:
            field = "item_id" if key == "id" else key
            given = whole.get(key) if whole is not None else None
            if isinstance(given, str) and given and (call["open"] or call[field] in ("", None)):
                call[field] = given
                if field == "item_id":
                    by_id[given] = call
        if call["open"] and isinstance(value, str):
            call["stated"] = value

    for event in events:
        if not isinstance(event, dict):
            continue
        kind = event.get("type")
        index = event.get("output_index")
        item = event.get("item")
        whole = isinstance(item, dict) and type(index) is int and index >= 0
        if kind == "response.created":
            at.clear()  # output indexes start again in each response
        elif kind == "response.output_item.added" and whole:
            if item.get("type") == CALL:
                new(index, item)
            else:
                at[index] = None
                if isinstance(item.get("id"), str):
                    by_id[item["id"]] = None
        elif kind == "response.function_call_arguments.delta":
            call, text = find(event), event.get("delta")
            if call is not None and isinstance(text, str):
                call["parts"].append(text)
                given = event.get("call_id")
                if call["call_id"] == "" and isinstance(given, str) and given:
                    call["call_id"] = given  # only where none was given
        elif kind == "response.function_call_arguments.done":
            call = find(event)
            if call is not None:
                for key in ("call_id", "name"):  # only where none was given
                    if call[key] == "" and isinstance(event.get(key), str) and event[key]:
                        call[key] = event[key]
            state(call, event.get("arguments"))
        elif kind == "response.output_item.done" and whole:
            item_id = item.get("id")
            if isinstance(item_id, str) and item_id in by_id:
                call, known = by_id[item_id], True
            else:
                call, known = at.get(index), index in at
            if not known and item.get("type") == CALL:
                call = new(index, item)
            state(call, item.get("arguments"), item, ("call_id", "name", "id"))
            if call is not None:
                call["open"] = False
        elif kind == "response.done":
            response = event.get("response") if isinstance(event.get("response"), dict) else {}
            output = response.get("output") if isinstance(response.get("output"), list) else []
            for position, item in enumerate(output):
                if not isinstance(item, dict) or item.get("type") != CALL:
                    continue
                item_id = item.get("id")
                call = by_id.get(item_id) if isinstance(item_id, str) else None
                call = call or new(position, item)
                state(call, item.get("arguments"), item)
                call["open"] = False
    out = []
    for c in calls:
        streamed, stated = "".join(c["parts"]), c["stated"]
        arguments = streamed if stated is None or stated == "" else stated
        out.append(
            {
                "call_id": c["call_id"],
                "item_id": c["item_id"],
                "name": c["name"],
                "arguments": arguments,
            }
        )
    return out


# END EMBED


def source() -> str:
    """The embedded part of this module, as text."""
    import inspect
    import sys

    text = inspect.getsource(sys.modules[__name__])
    return text.split("# BEGIN EMBED\n", 1)[1].split("# END EMBED", 1)[0].strip() + "\n"
