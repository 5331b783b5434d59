"""`streamscope replay`: the Textual app. A thin face over the engine (see model.py)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from textual import work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from ..analysis import ExchangeInfo
from ..inputs.reads import BlockReads, ExchangeReads, LineReads, Reads
from ..inputs.sniff import RECORDING, SSE, sniff
from ..recording import RecordingIndex
from .model import StreamModel
from .screens import ExchangesScreen, Loading, StreamScreen, TextScreen, help_text


class ReplayApp(App):
    CSS_PATH = "streamscope.tcss"
    TITLE = "streamscope replay"
    BINDINGS = [Binding("ctrl+c", "quit", "Quit", show=False, priority=True)]

    def __init__(
        self, source: str, exchange: int | None = None, frame: int = 0, follow: bool = False
    ) -> None:
        super().__init__()
        self.source = os.fspath(source)
        self.format = sniff(self.source)  # RecordingError for bad input, before any screen
        self.exchange = exchange
        self.start_frame = frame
        self.follow = follow
        self.index: RecordingIndex | None = None
        self.infos: list[ExchangeInfo] = []
        self._follow_size = 0

    def on_mount(self) -> None:
        self.push_screen(Loading(f"Reading {Path(self.source).name} …"))
        self.load()
        if self.follow:
            self.set_interval(1.0, self._check_growth)

    # -- loading -------------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="load")
    def load(self) -> None:
        loading = self.screen

        def progress(done: int, total: int) -> None:
            if isinstance(loading, Loading):
                self.call_from_thread(loading.progress, done, total)

        try:
            if self.format == RECORDING:
                self.index = RecordingIndex.open(self.source, progress=progress)
                self.infos = exchange_infos(self.index)
                self._follow_size = os.path.getsize(self.source)
            self.call_from_thread(self._loaded)
        except Exception as exc:
            self.call_from_thread(self.exit, message=f"streamscope: {exc}", return_code=2)

    def _loaded(self) -> None:
        if self.format != RECORDING:
            self.open_stream(1, replace=True)
            return
        streams = [i for i in self.infos]
        if self.exchange is not None:
            if self.exchange not in {i.exchange for i in streams}:
                self.exit(
                    message=f"streamscope: {self.source}: there is no exchange {self.exchange}",
                    return_code=2,
                )
                return
            self.open_stream(self.exchange, replace=True)
        elif len(streams) == 1 and not self.follow:  # following: more exchanges may come
            self.open_stream(streams[0].exchange, replace=True)
        else:
            self.switch_screen(ExchangesScreen(self.infos))

    def reads(self, exchange: int) -> Reads:
        if self.format == RECORDING:
            assert self.index is not None
            return ExchangeReads(self.index, exchange)
        return BlockReads(self.source) if self.format == SSE else LineReads(self.source)

    def open_stream(self, exchange: int, replace: bool = False) -> None:
        info = next((i for i in self.infos if i.exchange == exchange), None)
        end = {"end_reason": info.end_reason, "status": info.status} if info is not None else {}
        if info is not None and info.end_ns is None:
            end["end_reason"] = "unfinished"
        model = StreamModel(
            self.reads(exchange),
            exchange,
            info.tools if info else None,
            info.response_format if info else None,
            end,
        )
        loading = Loading(f"Reading exchange {exchange} …")
        if replace:
            self.switch_screen(loading)
        else:
            self.push_screen(loading)
        self.build(model, loading, exchange)

    @work(thread=True, group="build")
    def build(self, model: StreamModel, loading: Loading, exchange: int) -> None:
        model.build(lambda done, total: self.call_from_thread(loading.progress, done, total))
        self.call_from_thread(self._built, model, exchange)

    def _built(self, model: StreamModel, exchange: int) -> None:
        name = Path(self.source).name
        title = f"{name} · exchange {exchange}" if self.format == RECORDING else name
        start = self.start_frame
        self.start_frame = 0
        self.switch_screen(StreamScreen(model, title, start))

    def _check_growth(self) -> None:
        """--follow: when the recording grew, read it again and show the newest state."""
        try:
            size = os.path.getsize(self.source)
        except OSError:
            return
        if size != self._follow_size and self.format == RECORDING:
            self._follow_size = size
            self.notify("the recording grew: reloading", timeout=2)
            screen = self.screen
            if isinstance(screen, StreamScreen):  # stay on this stream, at its newest frame
                self.exchange = screen.model.exchange
                self.start_frame = 10**12
            else:  # the exchanges list, reloaded with the new ones
                self.exchange = None
            self.switch_screen(Loading(f"Reading {Path(self.source).name} again …"))
            self.load()

    # -- app-wide actions ------------------------------------------------------------------

    def action_help(self) -> None:
        self.push_screen(TextScreen("streamscope replay: help", help_text()))

    def action_back(self) -> None:
        if len(self.screen_stack) > 2:
            self.pop_screen()
        else:
            self.exit()

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        for binding in screen.BINDINGS:
            if isinstance(binding, Binding) and binding.description:
                action = binding.action
                yield SystemCommand(
                    binding.description,
                    f"key: {binding.key_display or binding.key}",
                    lambda action=action, screen=screen: self.run_action(action, screen),
                )


def exchange_infos(index: RecordingIndex) -> list[ExchangeInfo]:
    """The exchanges screen's facts, from the request, response and end lines only."""
    infos = []
    for ex in index.exchanges():
        info = ExchangeInfo(ex)
        lines = index.exchange(ex)
        if lines.request is not None:
            req = index.line(lines.request)
            info.method, info.url, info.start_ns = req.method, req.url, req.t_ns
            body = req.json_body()
            if isinstance(body, dict):
                info.model = body.get("model") if isinstance(body.get("model"), str) else None
                info.tools = body.get("tools") if isinstance(body.get("tools"), list) else None
                info.response_format = body.get("response_format")
                info.stream = body.get("stream") is True
        if lines.response is not None:
            info.status = index.line(lines.response).status
        if lines.end is not None:
            end = index.line(lines.end)
            info.end_ns, info.end_reason = end.t_ns, end.reason
        infos.append(info)
    return infos
