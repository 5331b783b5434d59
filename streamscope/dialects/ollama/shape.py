"""What `--minimal` knows of Ollama lines: where their fields are, which text pieces
build one value, which keys never matter to accumulation."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..base import Shape
from .robust import METADATA

# Keys that never matter to accumulation (dropped unless --keep-fields, and only when the
# signature holds without them).
VOLATILE = METADATA | {"images"}


def containers(tree: object) -> Iterator[tuple[str, tuple[Any, ...], object]]:
    """(role, path, node): the line, its message, its tool_calls, each entry, its function."""
    if not isinstance(tree, dict):
        return
    yield "line", (), tree
    message = tree.get("message")
    if not isinstance(message, dict):
        return
    yield "message", ("message",), message
    calls = message.get("tool_calls")
    if not isinstance(calls, list):
        return
    yield "calls", ("message", "tool_calls"), calls
    for k, entry in enumerate(calls):
        if isinstance(entry, dict):
            yield "call", ("message", "tool_calls", k), entry
            if isinstance(entry.get("function"), dict):
                yield "function", ("message", "tool_calls", k, "function"), entry["function"]


def sites(trees: list[object]) -> list[list[tuple[int, tuple[Any, ...]]]]:
    """The text pieces of the message (content, thinking), each in stream order."""
    groups: dict[str, list[tuple[int, tuple[Any, ...]]]] = {}
    for f, tree in enumerate(trees):
        message = tree.get("message") if isinstance(tree, dict) else None
        if not isinstance(message, dict):
            continue
        for key in ("content", "thinking"):
            if isinstance(message.get(key), str):
                groups.setdefault(key, []).append((f, ("message", key)))
    return [g for g in groups.values() if len(g) > 1]


SHAPE = Shape(
    containers=containers,
    levels=(
        ("keys", "line"),
        ("keys", "message"),
        ("entries", "calls"),
        ("keys", "call"),
        ("keys", "function"),
    ),
    volatile=VOLATILE,
    volatile_roles=("line", "message"),
    sites=sites,
)
