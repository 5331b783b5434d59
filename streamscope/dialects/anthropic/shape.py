"""What `--minimal` knows of Anthropic Messages frames: where their fields are, which
fragments build one block, which keys never matter to accumulation."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..base import Shape

# Keys that never matter to accumulation (dropped unless --keep-fields, and only when the
# signature holds without them).
VOLATILE = frozenset(("usage", "stop_sequence", "stop_details", "container", "model", "role"))


def containers(tree: object) -> Iterator[tuple[str, tuple[Any, ...], object]]:
    """(role, path, node): the event, its message, its content block, its delta."""
    if not isinstance(tree, dict):
        return
    yield "event", (), tree
    for key, role in (("message", "message"), ("content_block", "block"), ("delta", "delta")):
        node = tree.get(key)
        if isinstance(node, dict):
            yield role, (key,), node


# The delta fields that accumulate, by delta type.
_JOINABLE = {"input_json_delta": "partial_json", "text_delta": "text", "thinking_delta": "thinking"}


def sites(trees: list[object]) -> list[list[tuple[int, tuple[Any, ...]]]]:
    """Each block's fragments (per message, block index and field), in stream order."""
    groups: dict[tuple[Any, ...], list[tuple[int, tuple]]] = {}  # type: ignore[type-arg]
    message = 0
    for f, tree in enumerate(trees):
        if not isinstance(tree, dict):
            continue
        kind = tree.get("type")
        if kind == "message_start":
            message += 1
        if kind != "content_block_delta":
            continue
        delta = tree.get("delta")
        kind = delta.get("type") if isinstance(delta, dict) else None
        field = _JOINABLE.get(kind) if isinstance(kind, str) else None
        index = tree.get("index")
        if field is None or not isinstance(delta.get(field), str) or type(index) is not int:  # type: ignore[union-attr]
            continue
        groups.setdefault((message, index, field), []).append((f, ("delta", field)))
    return [g for g in groups.values() if len(g) > 1]


SHAPE = Shape(
    containers=containers,
    levels=(("keys", "event"), ("keys", "message"), ("keys", "block"), ("keys", "delta")),
    volatile=VOLATILE,
    volatile_roles=("event", "message", "delta"),
    sites=sites,
)
