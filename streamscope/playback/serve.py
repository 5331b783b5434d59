"""`streamscope serve FILE...`: a mock provider of every API streamscope reads.

A raw ASGI app (MockProvider) on uvicorn, bound to 127.0.0.1 only (ServeServer). It
answers the requests every registered dialect claims (each provider's clients under
their base URL, streamscope/providers.py) with the recorded streams and responses, one
`send` per recorded upstream read (the recorded chunking), at the recorded timing
divided by `speed` (0: no waiting). Which exchange answers which request, the
headers sent, SSE bodies and chunk logs, strict mode and its errors: the rules are
playback/library.py's (its module docstring), shared with `playback_transport`, so a
mock server and an in-process transport replay a recording the same way.

Here, in addition:

- the response headers are sent at the recorded time after the request; a client that
  goes away stops its replay at once;
- an exchange cut short (its recorded upstream failed, the recorder stopped, or the
  recording stops before it ended: library.cut_short) is cut after its last read by
  aborting the connection, as the recorder did to its client;
- every answered request can be logged as one line (`log=`): `POST <path> -> openai.jsonl
  exchange 2 (matched by body)`.

The CLI is a thin call::

    server = ServeServer(files, port, speed, strict, log=say)   # RecordingError, OSError
    click.echo(server.base_url)   # http://127.0.0.1:PORT/v1, on stdout (an OpenAI client's)
    server.run()                  # until Ctrl-C; or serve(files, port, speed, strict)
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable

from ..http.loopback import LoopbackServer, until_disconnect
from ..providers import OPENAI, PROVIDERS, Provider
from ..text import say
from .library import Library, Pace, Selection, answer
from .sessions import Sessions
from .websocket import SessionPlayer

NAME = "streamscope serve"
_HOW = {"body": "matched by body", "any": "answers any request", "order": "next in order"}


class MockProvider:
    """The ASGI app: each request gets the exchange `Library.select` picks, replayed."""

    def __init__(
        self,
        library: Library,
        speed: float = 0.0,
        strict: bool = False,
        log: Callable[[str], None] | None = None,
    ) -> None:
        Pace(speed)  # checks it
        self.library = library
        self.speed = speed
        self.strict = strict
        self.log = log
        self.selections: list[Selection | None] = []  # one per request: what answered it

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        start = time.monotonic()
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        method, path = scope["method"], scope["path"]
        query = scope.get("query_string") or b""
        target = path + ("?" + query.decode("latin-1") if query else "")  # alt=sse tells
        heads = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"]]
        got = answer(self.library, method, target, bytes(body), self.strict, NAME, heads)
        self.selections.append(got.selection)
        if got.selection is None:
            self._say(f"{method} {path} -> {got.status}")
            await send(
                {
                    "type": "http.response.start",
                    "status": got.status,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"content-length", str(len(got.error)).encode()),
                        *((k.encode(), v.encode()) for k, v in got.error_headers),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": got.error})
            return
        selection = got.selection
        self._say(f"{method} {path} -> {selection.entry.label} ({_HOW[selection.how]})")
        await self._replay(selection, got.framing, Pace(self.speed, start), receive, send)

    def _say(self, line: str) -> None:
        if self.log is not None:
            self.log(line)

    async def _replay(
        self,
        selection: Selection,
        asked: str | None,
        pace: Pace,
        receive: Callable,
        send: Callable,
    ) -> None:
        entry = selection.entry
        said = entry.headers_for(asked)  # in the framing asked for
        headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in said]

        async def pump() -> None:
            delay = pace.wait(entry.head_s)
            if delay:
                await asyncio.sleep(delay)
            await send({"type": "http.response.start", "status": entry.status, "headers": headers})
            for data, at in entry.reads(asked):
                # sleep(0) at least: lets a client that went away be noticed between reads
                await asyncio.sleep(pace.wait(at))
                await send({"type": "http.response.body", "body": data, "more_body": True})
            if not entry.failed:
                await send({"type": "http.response.body", "body": b"", "more_body": False})

        gone, exc = await until_disconnect(pump(), receive)
        if not gone:
            if exc is not None:
                raise exc
            if entry.failed:
                # The recorded client saw its connection fail here; so does this one.
                raise ConnectionAbortedError(f"the recorded exchange was cut here: {entry.failed}")


class ServeServer(LoopbackServer):
    """The mock provider on 127.0.0.1: `run` here, or `start`/`stop`.

    Raises RecordingError for a file that cannot be served, ValueError for a negative
    speed, OSError when the port cannot be bound.
    """

    name = "mock provider"

    def __init__(
        self,
        paths: list[str],
        port: int = 0,
        speed: float = 0.0,
        strict: bool = False,
        log: Callable[[str], None] | None = None,
        library: Library | None = None,
    ) -> None:
        Pace(speed)
        # (a Library of its own choosing: `conformance --loop` picks each answer itself)
        self.library = library if library is not None else Library(paths)
        try:
            # a WebSocket upgrade (a recorded session's path) is played by the player
            self.sessions = Sessions.of(self.library.sessions, self.library.notes)
            self.player = SessionPlayer(self.sessions, speed, strict, log)
            super().__init__(
                MockProvider(self.library, speed, strict, log), port, upgrade=self.player
            )
        except BaseException:
            self.library.close()
            raise

    @property
    def base_url(self) -> str:
        """An OpenAI client's base URL."""
        return self.base_url_for(OPENAI)

    def base_url_for(self, provider: Provider) -> str:
        """A client of `provider`'s base URL (its SDK appends the API's path)."""
        return f"http://127.0.0.1:{self.port}{provider.serve_path}"

    def describe(self) -> str:
        """One line for the user: what is served, how."""
        mode = "strict" if self.app.strict else "in order when unmatched"
        speed = "no waiting" if not self.app.speed else f"speed {self.app.speed:g}"
        return f"serving {self.library.describe()} ({speed}, {mode}); Ctrl-C stops"

    def run(self) -> None:
        try:
            super().run()
        finally:
            self.library.close()

    def stop(self) -> None:
        super().stop()
        self.library.close()


def serve(
    paths: list[str],
    port: int = 0,
    speed: float = 0.0,
    strict: bool = False,
    echo: Callable[[str], None] = print,
) -> None:
    """The whole command: the base URL on stdout (via `echo`), the rest on stderr; runs
    until interrupted. Raises RecordingError, ValueError or OSError before serving."""

    server = ServeServer(paths, port, speed, strict, log=say)
    echo(server.base_url)
    sys.stdout.flush()
    say(server.describe())
    for note in server.library.notes:  # what of the recorded heads cannot be sent, cut-offs
        say(note)
    for provider in PROVIDERS:  # the other providers whose exchanges the files hold
        if provider is not OPENAI and any(server.library.answers(d) for d in provider.speaks()):
            say(f"{provider.client}'s base URL: {server.base_url_for(provider)}")
    for path in server.sessions.paths():  # what a WebSocket client connects to
        say(f"WebSocket sessions: ws://127.0.0.1:{server.port}{path}")
    server.run()
