"""A small, portable accumulator that reads Bedrock ConverseStream events the way
streamscope's robust reading does.

Its source is embedded in every exported pytest module as the function the user swaps for
their own client's. It works on the events boto3's `response["stream"]` yields
(`{"contentBlockDelta": {...}}` each): toolUse blocks keyed by `contentBlockIndex`, each
opened by its `contentBlockStart`, its input the `toolUse.input` fragments concatenated
and parsed once the block stops (`{}` when none carried text: a tool without arguments).
"""

from __future__ import annotations

# BEGIN EMBED


def accumulate(events):
    """toolUse calls from ConverseStream events: [{"toolUseId", "name", "input"}, ...] in
    the order their blocks started."""
    import json

    calls, by_index = [], {}
    for event in events:
        if "contentBlockStart" in event:
            body = event["contentBlockStart"]
            tool = (body.get("start") or {}).get("toolUse")
            if tool is not None:
                # an id or name that is no string is none
                call = {k: tool.get(k) for k in ("toolUseId", "name")}
                call = {k: v if isinstance(v, str) else "" for k, v in call.items()}
                by_index[body["contentBlockIndex"]] = [call, [], False]
                calls.append(by_index[body["contentBlockIndex"]])
        elif "contentBlockDelta" in event:
            body = event["contentBlockDelta"]
            tool = (body.get("delta") or {}).get("toolUse")
            entry = by_index.get(body.get("contentBlockIndex"))
            if tool is not None and entry is not None:
                entry[1].append(tool.get("input", ""))
        elif "contentBlockStop" in event:
            entry = by_index.get(event["contentBlockStop"].get("contentBlockIndex"))
            if entry is not None:
                entry[2] = True
    out = []
    for call, parts, stopped in calls:
        text = "".join(parts)
        try:
            value = json.loads(text) if text else ({} if stopped else "")
        except ValueError:
            value = text  # not JSON: as it came
        out.append({**call, "input": value})
    return out


# END EMBED


def source() -> str:
    """The embedded part of this module, as text."""
    import inspect
    import sys

    text = inspect.getsource(sys.modules[__name__])
    return text.split("# BEGIN EMBED\n", 1)[1].split("# END EMBED", 1)[0].strip() + "\n"
