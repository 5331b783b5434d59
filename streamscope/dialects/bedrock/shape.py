"""What `--minimal` knows of Bedrock Converse events: where their fields are, which
fragments build one block, which keys never matter to accumulation.

A frame stays an event of its own name (its `:event-type` travels beside the payload, as
the SSE event name `--minimal` writes), so only payload keys are dropped: the `p`
padding, usage, metrics, a trace.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..base import Shape

# Keys that never matter to accumulation (dropped unless --keep-fields, and only when the
# signature holds without them).
VOLATILE = frozenset(("p", "usage", "metrics", "trace", "performanceConfig", "serviceTier", "role"))


def containers(tree: object) -> Iterator[tuple[str, tuple[Any, ...], object]]:
    """(role, path, node): the event, its start, its delta."""
    if not isinstance(tree, dict):
        return
    yield "event", (), tree
    for key, role in (("start", "start"), ("delta", "delta")):
        node = tree.get(key)
        if isinstance(node, dict):
            yield role, (key,), node


# The delta fields that accumulate: (member, key inside it or None for the member itself).
_JOINABLE = (("toolUse", "input"), ("text", None), ("reasoningContent", "text"))


def sites(trees: list[object]) -> list[list[tuple[int, tuple[Any, ...]]]]:
    """Each block's fragments (per block index and field), in stream order."""
    groups: dict[tuple[Any, ...], list[tuple[int, tuple[Any, ...]]]] = {}
    for f, tree in enumerate(trees):
        if not isinstance(tree, dict):
            continue
        delta, index = tree.get("delta"), tree.get("contentBlockIndex")
        if not isinstance(delta, dict) or type(index) is not int:
            continue
        for member, key in _JOINABLE:
            node = delta.get(member)
            path: tuple[Any, ...] = ("delta", member) if key is None else ("delta", member, key)
            value = node if key is None else node.get(key) if isinstance(node, dict) else None
            if isinstance(value, str):
                groups.setdefault((index, member), []).append((f, path))
    return [g for g in groups.values() if len(g) > 1]


SHAPE = Shape(
    containers=containers,
    levels=(("keys", "event"), ("keys", "start"), ("keys", "delta")),
    volatile=VOLATILE,
    volatile_roles=("event",),
    sites=sites,
)
