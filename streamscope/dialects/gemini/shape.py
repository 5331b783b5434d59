"""What `--minimal` knows of Gemini chunks: where their fields are, which string pieces
build one value, which keys never matter to accumulation."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..base import Shape

# Keys that never matter to accumulation (dropped unless --keep-fields, and only when the
# signature holds without them).
VOLATILE = frozenset(
    (
        "usageMetadata",
        "modelVersion",
        "responseId",
        "createTime",
        "safetyRatings",
        "citationMetadata",
        "avgLogprobs",
        "groundingMetadata",
    )
)


def containers(tree: object) -> Iterator[tuple[str, tuple[Any, ...], object]]:
    """(role, path, node): the chunk, its candidates, each candidate, its parts, each part,
    its functionCall, its partialArgs."""
    if not isinstance(tree, dict):
        return
    yield "chunk", (), tree
    cands = tree.get("candidates")
    if not isinstance(cands, list):
        return
    yield "candidates", ("candidates",), cands
    for c, cand in enumerate(cands):
        if not isinstance(cand, dict):
            continue
        at = ("candidates", c)
        yield "candidate", at, cand
        content = cand.get("content")
        parts = content.get("parts") if isinstance(content, dict) else None
        if not isinstance(parts, list):
            continue
        yield "parts", (*at, "content", "parts"), parts
        for k, part in enumerate(parts):
            if not isinstance(part, dict):
                continue
            here = (*at, "content", "parts", k)
            yield "part", here, part
            fc = part.get("functionCall")
            if isinstance(fc, dict):
                yield "call", (*here, "functionCall"), fc
                if isinstance(fc.get("partialArgs"), list):
                    yield "partials", (*here, "functionCall", "partialArgs"), fc["partialArgs"]


def sites(trees: list[object]) -> list[list[tuple[int, tuple[Any, ...]]]]:
    """The text pieces of each candidate (text, thought) in stream order; streamed string
    values are joined by the engine only with willContinue, so they are left alone."""
    groups: dict[tuple[Any, ...], list[tuple[int, tuple]]] = {}  # type: ignore[type-arg]
    for f, tree in enumerate(trees):
        for role, path, node in containers(tree):
            if role != "part" or not isinstance(node.get("text"), str):  # type: ignore[attr-defined]
                continue
            key = (path[1], node.get("thought") is True)  # type: ignore[attr-defined]
            groups.setdefault(key, []).append((f, (*path, "text")))
    return [g for g in groups.values() if len(g) > 1]


SHAPE = Shape(
    containers=containers,
    levels=(
        ("entries", "candidates"),
        ("keys", "chunk"),
        ("keys", "candidate"),
        ("entries", "parts"),
        ("keys", "part"),
        ("keys", "call"),
        ("entries", "partials"),
    ),
    volatile=VOLATILE,
    volatile_roles=("chunk", "candidate"),
    sites=sites,
)
