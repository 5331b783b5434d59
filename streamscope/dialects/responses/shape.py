"""What `--minimal` knows of OpenAI Responses API frames: where their fields are, which
deltas build one item, which keys never matter to accumulation."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..base import Shape

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
    groups: dict[tuple[Any, ...], list[tuple[int, tuple]]] = {}  # type: ignore[type-arg]
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


SHAPE = Shape(
    containers=containers,
    levels=(("keys", "event"), ("keys", "item"), ("keys", "response")),
    volatile=VOLATILE,
    volatile_roles=("event", "item", "response"),
    sites=sites,
)
