"""A minimal, fast SSE upstream for bench_proxy.py: a stand-in for an OpenAI-style API.

    python benchmarks/sse_upstream.py [--port N]

Listens on 127.0.0.1 (port 0 takes a free one) and prints the port as its first line on
stdout. Plain blocking sockets, one thread per connection, HTTP/1.1 keep-alive, chunked
responses, TCP_NODELAY: each event is one chunk and one `sendall`, as a real server writes
them. It answers POST .../chat/completions with a streamed tool call: `events`
`chat.completion.chunk` events of about 275 bytes (argument fragments), then
`data: [DONE]`. The request body's `x_bench` object sets `events` (default 100) and
`pace_ms` (0: as fast as the socket takes them; else event i is written at
t0 + i * pace_ms, on an absolute schedule).

Every event carries the `time.monotonic_ns()` at which it was written, in its
`system_fingerprint` ("fp_<ns>"): CLOCK_MONOTONIC is system-wide on Linux, so a client in
another process can compute each event's latency. SIGINT or SIGTERM stops the server.
"""

from __future__ import annotations

import argparse
import json
import signal
import socket
import sys
import threading
import time

# The arguments the tool call streams, cut into fragments of 6-24 characters.
_ARGUMENTS = json.dumps(
    {
        "path": "src/streaming/relay.py",
        "content": (
            "import asyncio\n\n\nasync def relay(reader, writer):\n"
            '    """Copy every read at once; never wait for the end of a body."""\n'
            "    while chunk := await reader.read(65536):\n"
            "        writer.write(chunk)\n        await writer.drain()\n"
            '    writer.write_eof()  # "done"\n'
        )
        * 4,
        "overwrite": True,
    }
)

_CREATED = 1736000000
_HEAD = (
    '{"id":"chatcmpl-B9bench","object":"chat.completion.chunk",'
    f'"created":{_CREATED},"model":"gpt-4o-mini",'
    '"system_fingerprint":"fp_'
)
_CACHE: dict[int, list[tuple[bytes, bytes]]] = {}
_CACHE_LOCK = threading.Lock()


def _fragments(n: int) -> list[str]:
    """n argument fragments (cycling over _ARGUMENTS), each 6-24 characters of raw text."""
    out, pos, i = [], 0, 0
    text = _ARGUMENTS * (1 + n * 24 // len(_ARGUMENTS))
    while len(out) < n:
        size = 6 + (i * 7) % 19
        out.append(text[pos : pos + size])
        pos += size
        i += 1
    return out


def templates(n: int) -> list[tuple[bytes, bytes]]:
    """(before, after) the send time for each of n events: `data: {...}\\n\\n` once joined."""
    with _CACHE_LOCK:
        cached = _CACHE.get(n)
        if cached is not None:
            return cached
        out = []
        frags = _fragments(max(n - 2, 0))
        for i in range(n):
            if i == 0:
                delta = {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "call_q3B7mLx0Ve2Rk9TzW1sYpHnA",
                            "type": "function",
                            "function": {"name": "write_file", "arguments": ""},
                        }
                    ],
                    "refusal": None,
                }
                finish = None
            elif i == n - 1:
                delta, finish = {}, "tool_calls"
            else:
                delta = {"tool_calls": [{"index": 0, "function": {"arguments": frags[i - 1]}}]}
                finish = None
            choices = [{"index": 0, "delta": delta, "finish_reason": finish}]
            tail = json.dumps({"choices": choices}, separators=(",", ":"))
            before = ("data: " + _HEAD).encode()
            after = ('",' + tail[1:] + "\n\n").encode()
            out.append((before, after))
        _CACHE[n] = out
        return out


class _Closed(Exception):
    pass


def _read_request(conn: socket.socket, buf: bytearray) -> tuple[bytes, dict[str, str], bytes]:
    """One request from conn (buf holds bytes already read): (request line, headers, body)."""
    while b"\r\n\r\n" not in buf:
        data = conn.recv(65536)
        if not data:
            raise _Closed
        buf += data
    end = buf.index(b"\r\n\r\n")
    lines = bytes(buf[:end]).split(b"\r\n")
    del buf[: end + 4]
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        headers[name.strip().lower().decode("latin-1")] = value.strip().decode("latin-1")
    if "chunked" in headers.get("transfer-encoding", "").lower():
        raise ValueError("chunked request bodies are not supported")
    length = int(headers.get("content-length", "0"))
    while len(buf) < length:
        data = conn.recv(65536)
        if not data:
            raise _Closed
        buf += data
    body = bytes(buf[:length])
    del buf[:length]
    return lines[0], headers, body


def _respond(conn: socket.socket, status: str, body: bytes, close: bool) -> None:
    head = (
        f"HTTP/1.1 {status}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\n" + ("connection: close\r\n" if close else "") + "\r\n"
    )
    conn.sendall(head.encode() + body)


def _stream(conn: socket.socket, events: int, pace_ms: float, close: bool) -> None:
    tpl = templates(events)
    head = (
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\n"
        "transfer-encoding: chunked\r\ncache-control: no-cache\r\n"
        "x-request-id: req_bench\r\nopenai-processing-ms: 42\r\n"
        + ("connection: close\r\n" if close else "")
        + "\r\n"
    )
    send = conn.sendall
    now = time.monotonic_ns
    send(head.encode())
    pace = int(pace_ms * 1_000_000)
    t0 = now()
    for i, (before, after) in enumerate(tpl):
        if pace:
            wait = t0 + i * pace - now()
            if wait > 0:
                time.sleep(wait / 1e9)
        payload = b"%s%d%s" % (before, now(), after)
        send(b"%x\r\n%s\r\n" % (len(payload), payload))
    done = b"data: [DONE]\n\n"
    send(b"%x\r\n%s\r\n0\r\n\r\n" % (len(done), done))


def handle(conn: socket.socket) -> None:
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    buf = bytearray()
    try:
        while True:
            line, headers, body = _read_request(conn, buf)
            close = headers.get("connection", "").lower() == "close"
            method, _, rest = line.partition(b" ")
            path = rest.partition(b" ")[0].partition(b"?")[0]
            if method != b"POST" or not path.endswith(b"/chat/completions"):
                _respond(conn, "404 Not Found", b'{"error":{"message":"not found"}}', close)
            else:
                bench = json.loads(body or b"{}").get("x_bench") or {}
                _stream(conn, int(bench.get("events", 100)), float(bench.get("pace_ms", 0)), close)
            if close:
                return
    except (_Closed, ConnectionError):
        pass
    finally:
        conn.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    server = socket.create_server(("127.0.0.1", args.port), backlog=128)
    print(server.getsockname()[1], flush=True)
    try:
        while True:
            conn, _ = server.accept()
            threading.Thread(target=handle, args=(conn,), daemon=True).start()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()


if __name__ == "__main__":
    main()
