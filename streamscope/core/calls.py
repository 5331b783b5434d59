"""What a strategy assembles: calls, or the exception that stopped it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class Call:
    """One assembled tool call, as one strategy holds it at some frame.

    Values are kept exactly as the strategy would hold them: `id` is None when the
    strategy never set it, "" when it set the empty string; `arguments` is normally
    a str but stays whatever JSON value the provider sent when that was not a string.
    """

    choice: int
    index: object
    id: object = None
    type: object = None
    name: object = None
    arguments: object = ""
    fragments: int = 0
    first_frame: int = 0
    last_frame: int = 0

    def key(self) -> tuple:
        """What `differs` compares between strategies."""
        return (self.id, self.name, self.type, self.arguments)


@dataclass(slots=True)
class StrategyError:
    """A strategy raised at `frame`; the contract prints it as {"error", "frame"}."""

    error: str
    frame: int

    @classmethod
    def from_exception(cls, exc: BaseException, frame: int) -> StrategyError:
        text = str(exc)
        return cls(f"{type(exc).__name__}: {text}" if text else type(exc).__name__, frame)


class Unmodeled(Exception):
    """An SDK emulation met a shape it does not reproduce: the real class must answer
    (the analysis driver runs it), or the strategy says it was not modelled."""
