"""bench_proxy.py --websocket: what the recorder's WebSocket relay adds per message,
against a direct connection to the same upstream (and mitmproxy's, when installed).

Run it through bench_proxy.py (its docstring says what is measured):

    .venv/bin/python benchmarks/bench_proxy.py --websocket [--quick] [--no-compression]
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import gc
import hashlib
import json
import os
import shutil
import signal
import socket
import statistics
import sys
import tempfile
import time
from urllib.parse import urlsplit

from benchmarks.bench_proxy import Proc, free_port, layout, pct
from streamscope.framing.websocket import encode
from streamscope.framing.ws_wire import WireFrame, WireParser, deflate_terms
from streamscope.recording import RecordingIndex

HERE = os.path.dirname(os.path.abspath(__file__))
GOAL_P50_MS = 0.3  # the HTTP path's goal for added per-event latency, p50 at 5 ms pacing
_ECHO = json.dumps(
    {
        "type": "conversation.item.create",
        "item": {
            "type": "function_call_output",
            "call_id": "call_bench",
            "output": "x" * 160,
        },
    }
)
_SENT = b'"sent_ns":'


@dataclasses.dataclass
class WsTarget:
    """One open WebSocket to a target: a raw socket, the server's frames parsed here."""

    name: str
    port: int
    path: str
    compression: bool
    sock: socket.socket | None = None
    parser: WireParser | None = None
    got: list[tuple[int, WireFrame]] = dataclasses.field(default_factory=list)
    received: list[bytes] = dataclasses.field(default_factory=list)  # server text messages

    def connect(self) -> None:
        s = socket.create_connection(("127.0.0.1", self.port), timeout=60)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        key = base64.b64encode(os.urandom(16)).decode()
        head = [
            f"GET {self.path} HTTP/1.1",
            f"Host: 127.0.0.1:{self.port}",
            "Upgrade: websocket",
            "Connection: Upgrade",
            f"Sec-WebSocket-Key: {key}",
            "Sec-WebSocket-Version: 13",
            "Authorization: Bearer sk-bench-not-a-real-key",
        ]
        if self.compression:  # as websockets' client offers it
            head.append("Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits")
        s.sendall(("\r\n".join(head) + "\r\n\r\n").encode())
        buf = b""
        while b"\r\n\r\n" not in buf:
            data = s.recv(65536)
            if not data:
                raise ConnectionError(f"{self.name} closed the connection during the handshake")
            buf += data
        raw, _, rest = buf.partition(b"\r\n\r\n")
        lines = raw.decode("latin-1").split("\r\n")
        if not lines[0].startswith("HTTP/1.1 101"):
            raise RuntimeError(f"{self.name}: {lines[0]}")
        ext = next(
            (
                v
                for k, _, v in (x.partition(":") for x in lines[1:])
                if k.lower() == "sec-websocket-extensions"
            ),
            None,
        )
        deflate, _, server_keeps = deflate_terms(ext)
        if self.compression and not deflate:
            raise RuntimeError(f"{self.name}: permessage-deflate was not agreed")
        self.sock, self.parser = s, WireParser(client=False, deflate=deflate, takeover=server_keeps)
        self.got = [(time.monotonic_ns(), f) for f in self.parser.feed(rest)]

    def send(self, text: str) -> None:
        assert self.sock is not None
        self.sock.sendall(encode(1, text.encode(), mask=os.urandom(4)))

    def next_text(self) -> tuple[int, bytes]:
        """The next whole text message from the server and when the read that completed it
        returned (messages of one frame: the upstream sends no other)."""
        assert self.sock is not None and self.parser is not None
        recv, feed, now = self.sock.recv, self.parser.feed, time.monotonic_ns
        while True:
            while self.got:
                t, f = self.got.pop(0)
                if f.opcode == 1:
                    self.received.append(f.payload)
                    return t, f.payload
                if f.opcode == 8:
                    raise ConnectionError(f"{self.name} sent a close frame")
            data = recv(262144)
            t = now()
            if not data:
                raise ConnectionError(f"{self.name} closed the connection")
            self.got = [(t, f) for f in feed(data)]

    def close(self) -> None:
        """The close handshake, then the socket."""
        if self.sock is None:
            return
        with contextlib.suppress(OSError):
            self.sock.sendall(encode(8, (1000).to_bytes(2, "big"), mask=os.urandom(4)))
            self.sock.settimeout(5)
            while self.sock.recv(65536):
                pass
        self.sock.close()
        self.sock = None


@dataclasses.dataclass
class Stream:
    total_ns: int  # request sent -> response.completed read
    latencies: list[int]  # per delta: arrival here - the upstream's send time


def stream(t: WsTarget, events: int, pace_ms: float) -> Stream:
    create = {"type": "response.create", "x_bench": {"events": events, "pace_ms": pace_ms}}
    latencies = []
    t0 = time.monotonic_ns()
    t.send(json.dumps(create, separators=(",", ":")))
    while True:
        at, data = t.next_text()
        i = data.find(_SENT)
        if i < 0:
            if not data.startswith(b'{"type":"response.completed"'):
                raise RuntimeError(f"{t.name}: unexpected message {data[:80]!r}")
            break
        i += len(_SENT)
        latencies.append(at - int(data[i : data.index(b",", i)]))
    if len(latencies) != events:
        raise RuntimeError(f"{t.name}: {len(latencies)} messages, expected {events}")
    return Stream(at - t0, latencies)


def echo(t: WsTarget, n: int) -> list[int]:
    """n round trips of a client message through the upstream's echo."""
    out = []
    for _ in range(n):
        t0 = time.monotonic_ns()
        t.send(_ECHO)
        at, data = t.next_text()
        if data != _ECHO.encode():
            raise RuntimeError(f"{t.name}: the echo differs: {data[:80]!r}")
        out.append(at - t0)
    return out


def rounds(targets: list[WsTarget], n: int, run) -> dict[str, list]:
    """`run(target)` n times per target, the targets taking turns (the order rotates)."""
    out: dict[str, list] = {t.name: [] for t in targets}
    for r in range(n):
        for t in targets[r % len(targets) :] + targets[: r % len(targets)]:
            gc.collect()
            out[t.name].append(run(t))
    return out


def check_recording(path: str, recorder: WsTarget, sent: int) -> tuple[bool, str]:
    """The recorded session's server text frames against the messages the client read."""
    problems = []
    with RecordingIndex.open(path) as idx:
        ids = idx.exchanges()
        if len(ids) != 1:
            problems.append(f"{len(ids)} exchanges recorded for 1 session")
        got_server, got_client = [], 0
        for x in ids:
            for m in idx.messages(x):
                if m.opcode == "text":
                    if m.sender == "server":
                        got_server.append(m.data_bytes)
                    else:
                        got_client += 1
            end = idx.exchange(x).end
            reason = idx.line(end).reason if end else None
            if reason != "complete":
                problems.append(
                    f"exchange {x} ends {reason!r}: {idx.line(end).error if end else ''}"
                )
    digest = hashlib.sha256(b"\n".join(got_server)).hexdigest()
    if digest != hashlib.sha256(b"\n".join(recorder.received)).hexdigest():
        problems.append(
            f"{len(got_server):,} server messages recorded, {len(recorder.received):,} read"
        )
    if got_client != sent:
        problems.append(f"{got_client:,} client messages recorded, {sent:,} sent")
    text = f"{len(got_server):,} server and {got_client:,} client messages recorded; " + (
        "equal to those read and sent (count and SHA-256): OK" if not problems else ""
    )
    if problems:
        text += "MISMATCH: " + "; ".join(problems[:5])
    return not problems, text


def main_ws(args) -> int:
    def interrupted(signum: int, _frame: object) -> None:
        raise KeyboardInterrupt(signal.Signals(signum).name)

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, interrupted)
    near, far, placement = layout(args.pin)
    if near is not None:
        os.sched_setaffinity(0, near)
    tmp = tempfile.mkdtemp(prefix="bench_proxy_ws-")
    procs: list[Proc] = []
    targets: list[WsTarget] = []
    compression = not args.no_compression
    notes = [
        f"layout: {placement} (--pin {args.pin})",
        "permessage-deflate: " + ("agreed end to end" if compression else "off (--no-compression)"),
    ]
    ok = False
    try:
        argv = [sys.executable, os.path.join(HERE, "ws_upstream.py"), "--port", "0"]
        up = Proc(
            "upstream",
            argv + (["--no-compression"] if not compression else []),
            tmp,
            signal.SIGTERM,
            near,
        )
        procs.append(up)
        up_port = int(up.first_line())
        recording = os.path.join(tmp, "recording.jsonl")
        argv = [sys.executable, "-m", "streamscope", "proxy", "--upstream"]
        argv += [f"http://127.0.0.1:{up_port}/v1", "-o", recording, "--port", "0"]
        rec = Proc("recorder", argv, tmp, signal.SIGINT, far)
        procs.append(rec)
        base = urlsplit(rec.first_line())
        targets = [
            WsTarget("direct", up_port, "/v1/responses", compression),
            WsTarget("recorder", base.port or 0, base.path + "/responses", compression),
        ]
        mitmdump = None if args.no_mitm else shutil.which("mitmdump")
        if mitmdump:
            port = free_port()
            argv = [mitmdump, "--mode", f"reverse:http://127.0.0.1:{up_port}"]
            argv += ["--listen-host", "127.0.0.1", "--listen-port", str(port), "-q"]
            argv += ["--set", f"confdir={os.path.join(tmp, 'mitmproxy')}"]
            mitm = Proc("mitmproxy", argv, tmp, signal.SIGINT, far)
            procs.append(mitm)
            mitm.wait_listening(port)
            targets.append(WsTarget("mitmproxy", port, "/v1/responses", compression))
        else:
            why = "--no-mitm" if args.no_mitm else "no mitmdump on PATH"
            notes.append(f"mitmproxy: skipped ({why})")
        for t in targets:
            t.connect()
        echoes = max(100, args.paced_events)
        gc.disable()
        rounds(targets, 1, lambda t: (stream(t, args.events, 0), echo(t, 50)))  # warm-up
        unpaced = rounds(targets, args.unpaced_runs, lambda t: stream(t, args.events, 0))
        paced = rounds(targets, args.runs, lambda t: stream(t, args.paced_events, args.pace_ms))
        echoed = rounds(targets, args.runs, lambda t: echo(t, echoes))
        gc.enable()
        sent = 50 + args.runs * echoes + 1 + args.unpaced_runs + args.runs  # to the recorder
        for t in targets:
            t.close()
        # the proxy sums the recording up when it stops: for the hundreds of thousands of
        # messages recorded here that takes a while, and is not what is measured
        stopping = time.monotonic()
        status = rec.stop(grace=300)
        took = time.monotonic() - stopping
        if status != 0:
            notes.append(f"streamscope proxy exited with status {status} on SIGINT")
        notes.append(f"streamscope proxy exited {took:.1f} s after SIGINT (its summary)")
        ok, check = check_recording(recording, targets[1], sent)
        notes.append(f"recording: {check}")
        report(args, [t.name for t in targets], unpaced, paced, echoed, echoes, notes)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
    except Exception:
        for p in procs:
            if p.tail():
                print(f"--- {p.name} stderr (last lines):\n{p.tail()}", file=sys.stderr)
        raise
    finally:
        for t in targets:
            with contextlib.suppress(OSError):
                t.close()
        for p in reversed(procs):
            p.stop()
        if args.keep:
            print(f"files kept in {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0 if ok else 1


def report(args, names, unpaced, paced, echoed, echoes, notes) -> None:
    ms = 1e6
    total = {n: statistics.median(r.total_ns for r in unpaced[n]) / ms for n in names}
    ratio = {n: total[n] / total["direct"] for n in names}
    per_msg = {n: (total[n] - total["direct"]) / args.events * 1000 for n in names}
    lats = {n: [x for r in paced[n] for x in r.latencies] for n in names}
    rtts = {n: [x for r in echoed[n] for x in r] for n in names}
    p50 = {n: pct(lats[n], 50) for n in names}
    p99 = {n: pct(lats[n], 99) for n in names}
    e50 = {n: pct(rtts[n], 50) for n in names}
    e99 = {n: pct(rtts[n], 99) for n in names}

    def added(d: dict[str, float], fmt: str) -> dict[str, str]:
        return {n: format(d[n] - d["direct"], fmt) for n in names if n != "direct"}

    def ratios(d: dict[str, float]) -> dict[str, str]:
        return {n: f"{d[n] / d['direct']:.2f}x" for n in names}

    added_p50 = p50["recorder"] - p50["direct"]
    goal = f"<= {GOAL_P50_MS:g} ms (the HTTP path's)  " + (
        "met" if added_p50 <= GOAL_P50_MS else "MISSED"
    )
    rows = [
        (f"server messages paced at {args.pace_ms:g} ms, {args.paced_events} a run", {}, ""),
        ("  latency p50, ms", {n: f"{p50[n]:.3f}" for n in names}, ""),
        ("    added", added(p50, "+.3f"), goal),
        ("  latency p99, ms", {n: f"{p99[n]:.3f}" for n in names}, ""),
        ("    added", added(p99, "+.3f"), "(no goal)"),
        (f"client message echoed, {echoes} a run", {}, ""),
        ("  round trip p50, ms", {n: f"{e50[n]:.3f}" for n in names}, ""),
        ("    added", added(e50, "+.3f"), ""),
        ("    ratio to direct", ratios(e50), ""),
        ("  round trip p99, ms", {n: f"{e99[n]:.3f}" for n in names}, ""),
        ("    added", added(e99, "+.3f"), ""),
        ("    ratio to direct", ratios(e99), ""),
        (f"server messages unpaced, {args.events:,} a run", {}, ""),
        ("  total, ms (median)", {n: f"{total[n]:.1f}" for n in names}, ""),
        ("  ratio to direct", {n: f"{ratio[n]:.2f}x" for n in names}, ""),
        ("  added per message, us", added(per_msg, "+.1f"), ""),
    ]
    w = 12
    print(
        f"bench_proxy --websocket: {args.unpaced_runs} unpaced, {args.runs} paced and "
        f"{args.runs} echo runs per target on one open WebSocket each, targets taking turns"
    )
    print(f"{'':36}" + "".join(f"{n:>{w}}" for n in names) + "   recorder's goal")
    for label, cells, g in rows:
        line = (
            f"{label:36}" + "".join(f"{cells.get(n, ''):>{w}}" for n in names) if cells else label
        )
        print((line + "   " + g).rstrip() if g else line)
    for note in notes:
        print(note)
