"""A WebSocket upstream for bench_proxy.py --websocket: a stand-in for the Responses API
over a WebSocket (as Codex speaks it), built on the `websockets` package.

    python benchmarks/ws_upstream.py [--port N] [--no-compression]

Listens on 127.0.0.1 (port 0 takes a free one) and prints the port as its first line on
stdout. Each text message a client sends is answered:

- `{"type":"response.create","x_bench":{"events":N,"pace_ms":P}}`: N
  `response.output_text.delta` messages of about 200 bytes (P = 0: as fast as the socket
  takes them; else message i is sent at t0 + i * P ms, on an absolute schedule), then a
  `response.completed`;
- anything else: echoed as it came (the client times the round trip).

Every delta carries the `time.monotonic_ns()` at which it was sent, in `sent_ns`:
CLOCK_MONOTONIC is system-wide on Linux, so a client in another process computes each
message's latency. permessage-deflate is accepted when the client offers it (websockets'
default), unless --no-compression. SIGINT or SIGTERM stops the server.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
import time

from websockets.asyncio.server import ServerConnection, serve

_DELTA = (
    '{"type":"response.output_text.delta","item_id":"msg_bench","output_index":0,'
    '"content_index":0,"sequence_number":%d,"sent_ns":%d,"delta":"%s"}'
)
_WORDS = "async def relay(reader, writer): copy every read at once, never wait for a body's end. "


async def answer(ws: ServerConnection) -> None:
    async for message in ws:
        asked = json.loads(message) if isinstance(message, str) else None
        if isinstance(asked, dict) and asked.get("type") == "response.create":
            bench = asked.get("x_bench", {})
            await stream(ws, int(bench.get("events", 100)), float(bench.get("pace_ms", 0)))
        else:
            await ws.send(message)


async def stream(ws: ServerConnection, events: int, pace_ms: float) -> None:
    t0 = time.monotonic()
    for i in range(events):
        if pace_ms:
            delay = t0 + i * pace_ms / 1000 - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
        delta = _WORDS[i % 40 : i % 40 + 48]
        await ws.send(_DELTA % (i, time.monotonic_ns(), delta))
    await ws.send('{"type":"response.completed","response":{"id":"resp_bench"}}')


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--no-compression", action="store_true")
    args = parser.parse_args()
    stop = asyncio.get_running_loop().create_future()
    for sig in (signal.SIGINT, signal.SIGTERM):
        asyncio.get_running_loop().add_signal_handler(sig, stop.set_result, None)
    compression = None if args.no_compression else "deflate"
    async with serve(
        answer, "127.0.0.1", args.port, compression=compression, max_size=None, ping_interval=None
    ) as server:
        print(server.sockets[0].getsockname()[1], flush=True)
        await stop


if __name__ == "__main__":
    asyncio.run(main())
    sys.exit(0)
