"""What `--minimal` knows of OpenAI Realtime frames: where their fields are, which deltas
build one item, which keys never matter to accumulation."""

from __future__ import annotations

from ..base import Shape
from ..responses.shape import containers, items, sites

# Keys that never matter to accumulation (dropped unless --keep-fields, and only when the
# signature holds without them). The status of an item and a response does matter here
# (the openai-sdk strategy runs only completed calls; the response's status is checked).
VOLATILE = frozenset(
    ("event_id", "usage", "object", "conversation_id", "content_index", "audio", "metadata")
)

# (an event, its item, its response: the Responses API's layout, read the same way; its
# deltas are grouped by item_id, else output_index, and its items found, as there; its
# events carry no sequence_number)
SHAPE = Shape(
    containers=containers,
    levels=(("keys", "event"), ("keys", "item"), ("keys", "response")),
    volatile=VOLATILE,
    volatile_roles=("event", "item", "response"),
    sites=sites,
    items=items,
)
