"""What the screens read and ask of the replay, in one object: the opened input and its
exchanges, the analysis of every exchange, and whether the recording is followed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import field

from ..analysis.driver import ExchangeSummary
from ..core.record import record
from ..inputs import ExchangeInfo, Source
from ..recording.copies import name_of

Summaries = dict[int, ExchangeSummary]


@record(eq=False)
class Session:
    input: Source | None  # None while a followed recording waits for its first line
    follow: bool = False  # --follow: the recording is still being written
    infos: list[ExchangeInfo] = field(default_factory=list)
    summaries: Summaries | None = None  # the analysis, once done ({} when it failed)
    analysis_error: str | None = None  # why the analysis could not run
    start_analysis: Callable[[], None] = lambda: None  # the app's: runs it in a worker
    _waiting: list[Callable[[Summaries], None]] = field(default_factory=list)

    @property
    def name(self) -> str:
        assert self.input is not None
        return name_of(self.input.path)

    def when_analysed(self, then: Callable[[Summaries], None]) -> None:
        """Call `then` with every exchange's summary: now if known, else once analysed."""
        if self.summaries is not None:
            then(self.summaries)
            return
        self._waiting.append(then)
        if len(self._waiting) == 1:
            self.start_analysis()

    def analysed(self, summaries: Summaries, error: str | None = None) -> None:
        self.summaries, self.analysis_error = summaries, error
        waiting, self._waiting = self._waiting, []
        for then in waiting:
            then(summaries)

    def grew(self, infos: list[ExchangeInfo], rows: list[ExchangeSummary] | None) -> None:
        """--follow: the exchanges as they are now, and the summaries of those that changed
        (None: the analysis has not started; its first pass will read what was added)."""
        self.infos = infos
        if rows and self.summaries is not None:
            self.summaries = {**self.summaries, **{r.exchange: r for r in rows}}
