"""What `--minimal` knows of OpenAI Responses API frames: where their fields are, which
deltas build one item, which keys never matter to accumulation."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..base import ItemFrames, Shape

# Keys that never matter to accumulation (dropped unless --keep-fields, and only when the
# signature holds without them). `obfuscation` is random padding some servers add.
VOLATILE = frozenset(
    ("obfuscation", "usage", "model", "created_at", "status", "logprobs", "content_index")
)


def containers(tree: object) -> Iterator[tuple[str, tuple[Any, ...], object]]:
    """(role, path, node): the event, its item, its response."""
    if not isinstance(tree, dict):
        return
    yield "event", (), tree
    for key, role in (("item", "item"), ("response", "response")):
        node = tree.get(key)
        if isinstance(node, dict):
            yield role, (key,), node


def sites(trees: list[object]) -> list[list[tuple[int, tuple[Any, ...]]]]:
    """Each item's deltas (by item_id, else output_index, and event type), in stream order."""
    groups: dict[tuple[Any, ...], list[tuple[int, tuple[Any, ...]]]] = {}
    for f, tree in enumerate(trees):
        if not isinstance(tree, dict):
            continue
        kind = tree.get("type")
        if not (isinstance(kind, str) and kind.endswith(".delta")):
            continue
        if not isinstance(tree.get("delta"), str):
            continue
        item_id, index = tree.get("item_id"), tree.get("output_index")
        key = item_id if isinstance(item_id, str) else index
        if not isinstance(key, (str, int)):
            continue
        groups.setdefault((kind, key), []).append((f, ("delta",)))
    return [g for g in groups.values() if len(g) > 1]


def items(trees: list[object]) -> list[ItemFrames]:
    """Each output item's frames (those that name it by `item_id` or `item.id`, else by
    the `output_index` its added event gave it) and its entries in a response's `output`
    (the final event's states every item again)."""
    frames: dict[str, list[int]] = {}
    at_index: dict[int, str] = {}  # output_index -> the item id an event gave it
    echoes: dict[str, list[tuple[int, tuple[Any, ...]]]] = {}
    for f, tree in enumerate(trees):
        if not isinstance(tree, dict):
            continue
        response = tree.get("response")
        output = response.get("output") if isinstance(response, dict) else None
        for k, entry in enumerate(output if isinstance(output, list) else ()):
            item_id = entry.get("id") if isinstance(entry, dict) else None
            if isinstance(item_id, str):
                echoes.setdefault(item_id, []).append((f, ("response", "output", k)))
        item = tree.get("item")
        named = tree.get("item_id")
        if not isinstance(named, str) and isinstance(item, dict):
            named = item.get("id")
        index = tree.get("output_index")
        if isinstance(named, str):
            if type(index) is int:
                at_index.setdefault(index, named)
        elif type(index) is int and index in at_index:
            named = at_index[index]
        if isinstance(named, str):
            frames.setdefault(named, []).append(f)
    return [
        ItemFrames(tuple(mine), tuple(e for e in echoes.get(item_id, ()) if e[0] not in mine))
        for item_id, mine in frames.items()
    ]


SHAPE = Shape(
    containers=containers,
    levels=(("keys", "event"), ("keys", "item"), ("keys", "response")),
    volatile=VOLATILE,
    volatile_roles=("event", "item", "response"),
    sites=sites,
    items=items,
    ordinals=frozenset(("sequence_number",)),
)
