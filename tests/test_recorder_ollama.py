"""The recorder's Ollama side: `record` points OLLAMA_HOST at the proxy, which relays
`/api/chat`'s NDJSON read by read to the Ollama upstream's client and records it; a
client that leaves at the `"done": true` line ended a complete stream."""

from __future__ import annotations

import http.server
import threading

import httpx2
import pytest

from streamscope import dialects
from streamscope.providers import OLLAMA, ollama_host_url, side
from streamscope.record.proxy import ProxyServer, Upstream
from streamscope.record.runner import base_url_variables
from streamscope.recording import RecordingWriter, iter_records
from streamscope.recording.format import Request

from .test_recorder import ends, exchange_bytes

LINES = [
    b'{"model":"qwen3","message":{"role":"assistant","content":"Let me look."},"done":false}\n',
    b'{"model":"qwen3","message":{"role":"assistant","content":"","tool_calls":[{"function":'
    b'{"name":"get_weather","arguments":{"city":"Paris","done":true}}}]},"done":false}\n',
    b'{"model":"qwen3","message":{"role":"assistant","content":""},"done":true,'
    b'"done_reason":"stop","eval_count":12}\n',
]


class Ollama(http.server.ThreadingHTTPServer):
    """A fake Ollama on 127.0.0.1: `/api/chat` streams LINES chunked, each only once the
    client got the one before (so a buffering proxy would stall it), then holds the body
    open after the done line until the client leaves."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.got = [threading.Event() for _ in LINES]
        self.waited: list[bool] = []
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def __enter__(self) -> Ollama:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        server: Ollama = self.server  # type: ignore[assignment]
        self.send_response(200)
        self.send_header("content-type", "application/x-ndjson")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        try:
            for i, line in enumerate(LINES):
                if i:
                    server.waited.append(server.got[i - 1].wait(5))
                self.wfile.write(f"{len(line):x}\r\n".encode() + line + b"\r\n")
                self.wfile.flush()
            server.got[-1].wait(5)  # the body stays open: the client leaves first
        except OSError:
            pass


def test_ollama_chat_is_relayed_unbuffered_and_ends_complete_at_the_done_line(tmp_path):
    path = tmp_path / "ollama.jsonl"
    with Ollama() as upstream, RecordingWriter(path) as writer:
        server = ProxyServer(
            Upstream.parse("http://127.0.0.1:9/v1"),
            writer,
            timeout=30,
            sides={"ollama": Upstream.parse(upstream.url)},
        )
        server.start()
        try:
            base = server.base_url_of("ollama")
            assert base == f"http://127.0.0.1:{server.port}/ollama"
            assert base_url_variables(server, [])["OLLAMA_HOST"] == base
            got = []
            with httpx2.Client(timeout=10) as client:
                body = {"model": "qwen3", "messages": [{"role": "user", "content": "hi"}]}
                with client.stream("POST", base + "/api/chat", json=body) as response:
                    assert response.headers["content-type"] == "application/x-ndjson"
                    for line in response.iter_lines():
                        got.append(line.encode() + b"\n")
                        upstream.got[len(got) - 1].set()
                        if '"done":true' in line and "done_reason" in line:
                            break  # as a client that reads up to the last line does
        finally:
            server.stop()
    assert got == LINES
    assert upstream.waited == [True, True]  # each line reached the client on its own
    (request,) = [r for _, r in iter_records(path) if isinstance(r, Request)]
    assert request.url == upstream.url + "/api/chat"  # the mount is taken off
    assert exchange_bytes(path, 1) == b"".join(LINES)  # every byte, as relayed
    end = ends(path)[1]
    assert (end.reason, end.error) == ("complete", "the client closed after the final event")


def test_a_client_that_leaves_before_the_done_line_closed_it(tmp_path):
    watch = dialects.DIALECTS["ollama-chat"].final_event("/api/chat")
    for line in LINES[:2]:  # a `"done": true` inside a call's arguments is no end
        watch.seen(line)
    assert not watch.relayed
    watch.seen(LINES[2][:40])
    watch.seen(LINES[2][40:-1])
    assert not watch.relayed  # the line is not whole yet
    watch.seen(b"\n")
    assert watch.relayed


@pytest.mark.parametrize(
    "host, url",
    [
        ("127.0.0.1:11500", "http://127.0.0.1:11500"),
        (":11500", "http://127.0.0.1:11500"),
        ("0.0.0.0", "http://0.0.0.0:11434"),
        ("example.com", "http://example.com:11434"),
        ("https://example.com", "https://example.com:443"),
        ("http://example.com", "http://example.com:80"),
        ("http://10.0.0.2:8080/ollama/", "http://10.0.0.2:8080/ollama"),
        ("[::1]:11500", "http://[::1]:11500"),
    ],
)
def test_ollama_host_is_read_as_the_ollama_clients_read_it(host, url):
    assert ollama_host_url(host) == url
    assert side("ollama").upstream(None, {"OLLAMA_HOST": host}) == url


def test_the_ollama_upstream_defaults_to_the_local_server():
    assert side("ollama").upstream(None, {}) == "http://127.0.0.1:11434"
    assert side("ollama").upstream("http://gpu:11434", {"OLLAMA_HOST": "x:1"}) == "http://gpu:11434"
    assert OLLAMA.sides[0].env == ("OLLAMA_HOST",)
