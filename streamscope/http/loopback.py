"""An ASGI app on uvicorn, on 127.0.0.1 only: the recorder's proxy and the mock provider."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Callable, Coroutine

import uvicorn

from .websocket import Handler, upgrade_protocol


def bind(port: int = 0) -> socket.socket:
    """A listening socket on 127.0.0.1 only; port 0 takes a free port."""
    # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY on accepted sockets only when the
    # listening socket says TCP, and without it every small write waits for a delayed ACK.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", port))
    except OSError:
        sock.close()
        raise
    sock.listen(2048)
    sock.set_inheritable(False)
    return sock


async def until_disconnect(work: Coroutine, receive: Callable) -> tuple[bool, BaseException | None]:
    """Run `work` (a response being sent) until it ends or the ASGI client goes away.

    Returns (the client went away first, the exception `work` ended with); `work` is
    cancelled if it was still running.
    """

    async def gone() -> None:
        while (await receive())["type"] != "http.disconnect":
            pass

    working = asyncio.ensure_future(work)
    watching = asyncio.ensure_future(gone())
    try:
        done, _ = await asyncio.wait({working, watching}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (working, watching):
            task.cancel()
        await asyncio.gather(working, watching, return_exceptions=True)
    if working in done and not working.cancelled():
        return False, working.exception()
    return True, None


class LoopbackServer:
    """Serve `app` on a port of 127.0.0.1: `run` in this thread, or `start` / `stop`."""

    name = "server"

    def __init__(
        self,
        app: object,
        port: int = 0,
        sock: socket.socket | None = None,
        upgrade: Handler | None = None,
    ) -> None:
        """`upgrade`: who takes a WebSocket upgrade's connection (None: it is answered
        as a plain HTTP request)."""
        self.sock = sock if sock is not None else bind(port)
        self.port = self.sock.getsockname()[1]
        self.app = app
        # uvicorn would log a traceback for an abort that tells a client its upstream
        # failed; streamscope says that itself (the recording's `end` line).
        config = uvicorn.Config(
            app,
            interface="asgi3",
            log_level="critical",
            access_log=False,
            lifespan="on",
            timeout_graceful_shutdown=2,
            server_header=False,  # the upstream's own server and date headers pass through
            date_header=False,
            # h11, named: the one HTTP parser whose upgrade hand-over (below) is tested
            # (uvicorn's "auto" would take httptools where it is installed)
            http="h11",
            # an upgrade's connection is handed over raw (http/websocket.py)
            ws=upgrade_protocol(upgrade) if upgrade is not None else "none",
        )
        self.server = uvicorn.Server(config)
        self.thread: threading.Thread | None = None

    def run(self) -> None:
        self.server.run(sockets=[self.sock])

    def start(self) -> None:
        self.thread = threading.Thread(
            target=self.run, name=f"streamscope-{self.name}", daemon=True
        )
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the {self.name} did not start")
            time.sleep(0.005)

    def stop(self) -> None:
        self.server.should_exit = True
        if self.thread is not None:
            self.thread.join(timeout=10)
        self.sock.close()

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
