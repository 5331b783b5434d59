"""The clients people ship for Ollama's native chat, each a fold over the same lines.

Each is handed, line by line, the calls the line makes (robust.line_calls: its
arguments as sent) and whether it is the `done: true` line; they differ in which calls
they keep.
"""

from __future__ import annotations

import copy

from ...core.calls import Call, Slot


class Fold:
    """Base: the calls a client keeps, in the order it keeps them."""

    name = ""

    def __init__(self) -> None:
        self.slots: list[Slot] = []

    def line(self, n: int, made: list[Slot], done: bool) -> None:
        raise NotImplementedError

    def result(self) -> list[Call]:
        out = []
        for k, slot in enumerate(self.slots):
            call = slot.to_call()
            call.index = k
            out.append(call)
        return out

    def copy(self) -> Fold:
        new = copy.copy(self)
        new.slots = list(self.slots)  # (a slot is never changed once made)
        return new


class StopAtDone(Fold):
    """Reads the calls of the `done: true` line only, and stops there: what clients
    written for servers that put the calls in the final line build. Since Ollama sent
    the calls in a `done: false` line before it (ollama/ollama PR #10415), they build
    none; kooshi/llama-swappo PR #13 moved its emulation of Ollama for those clients'
    sake."""

    name = "stop-at-done"

    def __init__(self) -> None:
        super().__init__()
        self.stopped = False

    def line(self, n: int, made: list[Slot], done: bool) -> None:
        if done and not self.stopped:
            self.slots.extend(made)
            self.stopped = True


class ContentOnly(Fold):
    """Reads `message.content` only: no native calls, whatever the stream carries. The
    clients that stream Ollama as text (LiteLLM's `ollama/` route, calebevans/mulder
    PR #143; ollama/ollama-python#279 before tools streamed) show a call only where the
    model wrote it as text."""

    name = "content-only"

    def line(self, n: int, made: list[Slot], done: bool) -> None:
        return None


class ByName(Fold):
    """Keeps calls in a dict keyed by function name: a later call of the same name
    replaces the earlier one's id and arguments where it stood, so two calls of one tool
    run once, with the last arguments (generative-computing/mellea#1431, its Ollama
    backend among others)."""

    name = "by-name"

    def __init__(self) -> None:
        super().__init__()
        self.at: dict[object, int] = {}

    def line(self, n: int, made: list[Slot], done: bool) -> None:
        for slot in made:
            k = self.at.get(slot.name)
            if k is None:
                self.at[slot.name] = len(self.slots)
                self.slots.append(slot)
            else:
                self.slots[k] = slot

    def copy(self) -> ByName:
        new = super().copy()
        assert isinstance(new, ByName)
        new.at = dict(self.at)
        return new
