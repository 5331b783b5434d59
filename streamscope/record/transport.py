"""In-process recording: a transport that records what a client sends and receives.

`recording_transport(path)` wraps the transport an httpx2 or httpx client would have
used and writes the recording the proxy writes (format v1, the same RecordingWriter and
masking): the request, the response head, every body read as it arrives with its time,
and an `end` line saying how the exchange really ended. The body reaches the caller read
by read, never buffered::

    http = httpx2.Client(transport=recording_transport("recordings/run.jsonl"))
    client = openai.OpenAI(http_client=http)

As the proxy does, the request goes upstream with `accept-encoding: identity`, so the
recording holds the body as the client reads it, not compressed; the request is recorded
with that header, as it was sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from types import ModuleType
from typing import Any

from ..core.codings import request_body
from ..dialects import DEFAULT, FinalWatch, final_watch, speaker
from ..http import clients
from ..recording import RecordingWriter


class Recorder:
    """Records exchanges into one writer; `send`/`asend` do the real request."""

    def __init__(self, writer: RecordingWriter, http: str | None = None) -> None:
        self.writer = writer
        self.http = http

    def _start(self, request: Any, body: bytes) -> tuple[ModuleType, int]:
        package = clients.package_of(request, self.http)
        ex = self.writer.new_exchange()
        request.headers["accept-encoding"] = "identity"  # before recording: what is sent
        self.writer.request(ex, request.method, str(request.url), request.headers.raw, body)
        return package, ex

    def _wrap(self, package: ModuleType, ex: int, request: Any, response: Any) -> Any:
        self.writer.response(ex, response.status_code, response.headers.raw)
        final = _final_watch(request, response)
        stream = _recorded_class(package)(self.writer, ex, response.stream, package, final)
        return package.Response(
            response.status_code,
            headers=response.headers,
            stream=stream,
            extensions=response.extensions,
            request=request,
        )

    def send(self, request: Any, send: Callable[[Any], Any]) -> Any:
        package, ex = self._start(request, request.read())
        try:
            response = send(request)
        except BaseException as e:
            self.writer.end(ex, *_reason(package, e))
            raise
        return self._wrap(package, ex, request, response)

    async def asend(self, request: Any, send: Callable[[Any], Awaitable[Any]]) -> Any:
        package, ex = self._start(request, await request.aread())
        try:
            response = await send(request)
        except BaseException as e:
            self.writer.end(ex, *_reason(package, e))
            raise
        return self._wrap(package, ex, request, response)


def _final_watch(request: Any, response: Any) -> FinalWatch:
    """The watch for the final event of the stream a request asks for, its dialect told
    once from the request (streamscope.dialects.speaker), its framing from the request
    and the response's head."""
    body = request_body(request.headers.multi_items(), request.content).data  # read already
    told = speaker(request.url.path, body, request.headers.keys()) or DEFAULT
    url = str(request.url)
    return final_watch(told, url, body, response.status_code, response.headers.multi_items())


def _reason(package: ModuleType, e: BaseException) -> tuple[str, str]:
    """The `end` reason and error for an exception from the upstream (or the caller)."""
    if isinstance(e, (asyncio.CancelledError, KeyboardInterrupt, GeneratorExit)):
        return "client-closed", f"the caller stopped the exchange ({type(e).__name__})"
    if isinstance(e, package.TimeoutException):
        return "timeout", f"{type(e).__name__}: {e}"
    return "upstream-error", f"{type(e).__name__}: {e}"


class _Recorded:
    """A response body that writes each read before handing it on. Made concrete per
    HTTP package (`_recorded_class`): the client checks the stream's type.

    A client that closes the body after its final event (`data: [DONE]`, where the openai
    SDK stops; Anthropic's `event: message_stop`; a Responses stream's whole
    `event: response.completed`, `.incomplete` or `.failed`) has the rest read here, so
    the `end` line says how the upstream ended, as the proxy's does; a body closed before
    it ends `client-closed` at once.
    """

    def __init__(
        self, writer: RecordingWriter, ex: int, inner: Any, package: ModuleType, final: FinalWatch
    ) -> None:
        self.writer, self.ex, self.inner, self.package = writer, ex, inner, package
        self.final = final
        self.ended = False
        self._it: Any = None

    def _end(self, reason: str, error: str | None = None) -> None:
        if not self.ended:
            self.ended = True
            self.writer.end(self.ex, reason, error)

    def _why(self, e: BaseException) -> tuple[str, str]:
        """The `end` line of reads stopped by `e`: a client that stops iterating once it
        has the final event (its reads closed, GeneratorExit) left a whole stream."""
        if isinstance(e, GeneratorExit) and self.final.relayed:
            return "complete", "the client closed after the final event"
        return _reason(self.package, e)

    def _read(self, data: bytes) -> bytes:
        if data:  # an empty read is no read
            self.writer.chunk(self.ex, data)
            self.final.seen(data)
        return data

    def _reads(self) -> Iterator[bytes]:
        if self._it is None:
            self._it = iter(self.inner)
        try:
            for data in self._it:
                yield self._read(data)
        except BaseException as e:
            self._end(*self._why(e))
            raise
        self._end("complete")

    async def _areads(self) -> AsyncIterator[bytes]:
        if self._it is None:
            self._it = aiter(self.inner)
        try:
            async for data in self._it:
                yield self._read(data)
        except BaseException as e:
            self._end(*self._why(e))
            raise
        self._end("complete")

    def __iter__(self) -> Iterator[bytes]:
        return self._reads()

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self._areads()

    def close(self) -> None:
        if not self.ended and self.final.relayed:
            with contextlib.suppress(Exception):  # the reason is written by _reads
                for _ in self._reads():
                    pass
        self._end("client-closed", "the client closed the response before its end")
        self.inner.close()

    async def aclose(self) -> None:
        if not self.ended and self.final.relayed:
            with contextlib.suppress(Exception):
                async for _ in self._areads():
                    pass
        self._end("client-closed", "the client closed the response before its end")
        await self.inner.aclose()


@functools.cache
def _recorded_class(package: ModuleType) -> type:
    return type("RecordedStream", (_Recorded, package.SyncByteStream, package.AsyncByteStream), {})


class RecordingTransport(clients.Transport):
    """Wraps a transport (default: the client package's own) and records through it: what
    `recording_transport` returns. A client of either package sends through it
    (`handle_request`, `handle_async_request`); `close()` / `aclose()` close the wrapped
    transport and the recording; it is also a (async) context manager."""

    def __init__(self, writer: RecordingWriter, transport: Any = None, http: str | None = None):
        if http is not None:
            clients.load(http)  # checks the name
        self.recorder = Recorder(writer, http)
        self.transport = transport
        self._sync: Any = transport
        self._async: Any = transport

    @property
    def writer(self) -> RecordingWriter:
        return self.recorder.writer

    def handle_request(self, request: Any) -> Any:
        if self._sync is None:
            self._sync = clients.package_of(request, self.recorder.http).HTTPTransport()
        return self.recorder.send(request, self._sync.handle_request)

    async def handle_async_request(self, request: Any) -> Any:
        if self._async is None:
            self._async = clients.package_of(request, self.recorder.http).AsyncHTTPTransport()
        return await self.recorder.asend(request, self._async.handle_async_request)

    def close(self) -> None:
        if self._sync is not None:
            self._sync.close()
        self.writer.close()

    async def aclose(self) -> None:
        if self._async is not None:
            await self._async.aclose()
        self.writer.close()


def recording_transport(
    path: str | os.PathLike[str],
    transport: Any = None,
    *,
    redact: bool = True,
    redact_json: Sequence[str] = (),
    overwrite: bool = False,
    http: str | None = None,
) -> RecordingTransport:
    """A transport for `httpx2.Client` or `httpx.Client` that records into `path`.

    Args:
        path: the recording to write; missing folders are created (0700, the
            recording 0600: it holds whole conversations), as `streamscope record`
            creates ./recordings.
        transport: the one to wrap (default: the client package's HTTPTransport).
        redact: mask API keys, cookies and auth headers as the proxy does (default on).
        redact_json: also mask these request body fields (e.g. "messages.*.content").
        overwrite: replace an existing recording (otherwise refused).
        http: "httpx2" or "httpx" to accept only that package's clients.

    Returns:
        A RecordingTransport: give it to a client as `transport=`. Closing the
        transport (closing its client) closes the recording.

    Raises:
        RecordingExists: `path` already holds something and `overwrite` is false (a
            FileExistsError whose message is one line).
        OSError: `path` cannot be created.
        ValueError: an `http` that is neither package.
    """
    writer = RecordingWriter(
        path, argv=sys.argv, redact=redact, redact_json=redact_json, overwrite=overwrite
    )
    return RecordingTransport(writer, transport, http)


def async_recording_transport(
    path: str | os.PathLike[str], transport: Any = None, **options: Any
) -> RecordingTransport:
    """The same transport, named for `httpx2.AsyncClient` / `httpx.AsyncClient` (and so
    for `openai.AsyncOpenAI`). Arguments, return and errors as `recording_transport`."""
    return recording_transport(path, transport, **options)
