"""Where things are in a Chat Completions chunk, for `--minimal` (export/minimize.py): its
containers by role, the levels its field steps go through, the strings that accumulate by
concatenation and which of them build the same thing, the keys that never matter."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ...core import jsonio

# Envelope and choice fields that never matter to accumulation.
VOLATILE = (
    "created",
    "system_fingerprint",
    "usage",
    "service_tier",
    "obfuscation",
    "logprobs",
    "stop_reason",
    "timings",
    "x_groq",
    "prompt_filter_results",
    "content_filter_results",
)
VOLATILE_KEYS = frozenset(VOLATILE)
VOLATILE_ROLES = ("envelope", "choice")

# String fields that accumulate by concatenation, by container role (see containers).
JOINABLE = {"delta": ("content", "reasoning_content", "refusal"), "function": ("arguments",)}

# The field levels of step 2, coarse to fine: ("keys" | "entries", container role).
LEVELS = (
    ("keys", "envelope"),
    ("entries", "choices"),
    ("keys", "choice"),
    ("keys", "delta"),
    ("entries", "tool_calls"),
    ("keys", "call"),
    ("keys", "function"),
)


def containers(tree: object) -> Iterator[tuple[str, tuple[Any, ...], object]]:
    """(role, path, node) for every container of a chunk that step 2 looks into."""
    if not isinstance(tree, dict):
        return
    yield "envelope", (), tree
    choices = tree.get("choices")
    if not isinstance(choices, list):
        return
    yield "choices", ("choices",), choices
    for i, choice in enumerate(choices):
        if not isinstance(choice, dict):
            continue
        at = ("choices", i)
        yield "choice", at, choice
        delta = choice.get("delta")
        if not isinstance(delta, dict):
            continue
        here = (*at, "delta")
        yield "delta", here, delta
        calls = delta.get("tool_calls")
        if not isinstance(calls, list):
            continue
        yield "tool_calls", here + ("tool_calls",), calls
        for j, call in enumerate(calls):
            if not isinstance(call, dict):
                continue
            yield "call", here + ("tool_calls", j), call
            fn = call.get("function")
            if isinstance(fn, dict):
                yield "function", here + ("tool_calls", j, "function"), fn


def at(tree: object, path: tuple[Any, ...]) -> Any:
    for step in path:
        tree = tree[step]  # type: ignore[index]
    return tree


def key(value: object) -> str:
    return jsonio.dumps(value, sort_keys=True).decode()


def join_sites(trees: list[object]) -> list[list[tuple[int, tuple[Any, ...]]]]:
    """The string fields that may be joined, grouped by what they accumulate into (one
    choice's content, one call's arguments...), each group in stream order."""
    groups: dict[tuple[Any, ...], list[tuple[int, tuple[Any, ...]]]] = {}
    for f, tree in enumerate(trees):
        for role, path, node in containers(tree):  # (none in a frame kept as text)
            fields = JOINABLE.get(role)
            if not fields:
                continue
            choice = key(at(tree, path[:2]).get("index"))
            call = key(at(tree, path[:-1]).get("index")) if role == "function" else ""
            for name in fields:
                if isinstance(node, dict) and isinstance(node.get(name), str):
                    groups.setdefault((role, choice, call, name), []).append((f, path + (name,)))
    return list(groups.values())


def take(trees: list[object], site: tuple[int, tuple[Any, ...]]) -> str:
    """Remove the string at `site` and return it. A tool call delta left with nothing but
    its index goes too when it was its chunk's only one (so no list index ever shifts)."""
    f, path = site
    holder = at(trees[f], path[:-1])
    text: str = holder.pop(path[-1])  # (a site holds a string)
    if path[-2] == "function" and not holder:
        delta = at(trees[f], path[:-4])
        if len(delta["tool_calls"]) == 1 and set(delta["tool_calls"][0]) <= {"index", "function"}:
            del delta["tool_calls"]
    return text


def choices(tree: object) -> list[Any]:
    choices = tree.get("choices") if isinstance(tree, dict) else None
    return choices if isinstance(choices, list) else []
