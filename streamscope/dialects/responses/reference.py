"""A small, portable accumulator that reads OpenAI Responses API events the way
streamscope's robust reading does.

Its source is embedded in every exported pytest module as the function the user swaps for
their own client's. It works on event dicts (`event.to_dict()` of the openai SDK's events,
or parsed JSON): a call is a `function_call` or `custom_tool_call` output item, found by
its `id` (what deltas name as `item_id`), else by its `output_index`; its arguments (a
custom call's input) are the item's own text plus its deltas, unless a later event
states the whole value (`.done`, `output_item.done`, the completed response's output):
then that value, except an empty one. The completed response's output names a call by its
`id`, else (a gateway that rotates item ids) by its `call_id`. Ids and names are kept
exactly as sent, "" when none came.
"""

from __future__ import annotations

# BEGIN EMBED
CALL_ITEMS = ("function_call", "custom_tool_call")
DELTAS = ("response.function_call_arguments.delta", "response.custom_tool_call_input.delta")
DONES = {
    "response.function_call_arguments.done": "arguments",
    "response.custom_tool_call_input.done": "input",
}
ENDS = ("response.completed", "response.incomplete", "response.failed")


def _field(item):
    return "input" if item.get("type") == "custom_tool_call" else "arguments"


def accumulate(events):
    """Tool calls from Responses API event dicts: [{"call_id", "item_id", "name",
    "arguments"}, ...], the arguments (a custom call's input) as text."""
    calls, at, by_id = [], {}, {}

    def new(index, item):
        text = item.get(_field(item))
        call = {
            # an id or name that is no string is none
            "call_id": item["call_id"] if isinstance(item.get("call_id"), str) else "",
            "item_id": item.get("id"),
            "type": item.get("type"),
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

    def state(call, value, whole=None):
        # a whole value counts until the item is done (output_item.done: its last word)
        if call is None or not call["open"]:
            return
        if isinstance(value, str):
            call["stated"] = value
        for key, field in (("call_id", "call_id"), ("id", "item_id"), ("name", "name")):
            if whole is not None and isinstance(whole.get(key), str):
                call[field] = whole[key]
        if isinstance(call["item_id"], str):
            by_id[call["item_id"]] = call

    for event in events:
        kind = event.get("type")
        index = event.get("output_index")
        item = event.get("item")
        whole = isinstance(item, dict) and type(index) is int and index >= 0
        if kind == "response.output_item.added" and whole:
            if item.get("type") in CALL_ITEMS:
                new(index, item)
            else:
                at[index] = None
                if isinstance(item.get("id"), str):
                    by_id[item["id"]] = None
        elif kind in DELTAS:
            call, text = find(event), event.get("delta")
            if call is not None and isinstance(text, str):
                call["parts"].append(text)
        elif kind in DONES:
            state(find(event), event.get(DONES[kind]))
        elif kind == "response.output_item.done" and whole:
            call = at.get(index)
            if call is None and index not in at and item.get("type") in CALL_ITEMS:
                call = new(index, item)
            state(call, item.get(_field(item)), item)
            if call is not None:
                call["open"] = False
        elif kind in ENDS:
            response = event.get("response") if isinstance(event.get("response"), dict) else {}
            output = response.get("output") if isinstance(response.get("output"), list) else []
            known = {c["item_id"]: c for c in calls if isinstance(c["item_id"], str)}
            by_call = {}
            for c in calls:
                if c["call_id"]:
                    by_call.setdefault(c["call_id"], c)
            stated = []
            for position, item in enumerate(output):
                if not isinstance(item, dict) or item.get("type") not in CALL_ITEMS:
                    continue
                item_id, call_id = item.get("id"), item.get("call_id")
                call = known.get(item_id) if isinstance(item_id, str) else None
                same = by_call.get(call_id) if isinstance(call_id, str) else None
                # an item id that changed (a gateway that rotates them): the call is still
                # the one with its call_id
                if (
                    call is None
                    and same is not None
                    and same["type"] == item.get("type")
                    and not any(same is c for c in stated)
                ):
                    call = same
                call = call or new(position, item)
                state(call, item.get(_field(item)), item)
                call["open"] = False
                stated.append(call)
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
