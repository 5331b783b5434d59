"""What does the recording proxy cost a streaming client, against going direct?

    .venv/bin/python benchmarks/bench_proxy.py [--events N] [--quick]

One run starts, each in its own process: the SSE upstream (benchmarks/sse_upstream.py),
`streamscope proxy` in front of it (recording to a temp file) and, when `mitmdump` is on
PATH, mitmproxy in reverse mode with streaming on (`stream_large_bodies=1`, recording
nothing). This process is the client: a raw socket, one keep-alive connection per target,
reading as fast as it can. It prints, for each target:

- unpaced: the wall time from sending the request to the end of a response of N
  `chat.completion.chunk` events (default 10,000, about 275 bytes each), median over the
  runs (25 by default), as a ratio to direct and as time added per event;
- paced (one event every 5 ms): the time from sending the request to the first event, and
  each event's latency (arrival here minus the `time.monotonic_ns()` the upstream embedded
  when it wrote the event; CLOCK_MONOTONIC is system-wide on Linux), p50 and p99 over all
  events of all runs; the proxies' figures are given as added to direct's;
- a check that the recording holds every byte: per exchange, the recorded chunks joined
  equal the body this client received (length and SHA-256), read with RecordingIndex.

Targets take turns within each round (the order rotates), so drift on the machine weighs
on all alike. Before each measured request a 2-event request on the same connection warms
the path (it also keeps the proxy's upstream connection in its pool), so the figures are
those of a client and proxy with open connections: no connect or accept in them. Every
figure is a ratio or a difference against direct in this same run; nothing is asserted.
All files go to a temp dir, removed at the end (--keep keeps it).

--websocket measures the WebSocket relay instead, against a `websockets` upstream
(benchmarks/ws_upstream.py, a stand-in for the Responses API over a WebSocket): one
open WebSocket per target (a raw socket here, frames parsed as they come), permessage-
deflate agreed as websockets' clients agree it (--no-compression: plain frames). For
each target, per message:

- echo: a 300-byte client message relayed to the upstream and back, round trip p50/p99;
- paced (one message every 5 ms): each server message's latency (arrival here minus the
  `sent_ns` the upstream embedded), p50/p99 over every message of every run;
- unpaced: N server messages as fast as they go, the median total, as a ratio to direct
  and as time added per message;
- a check that the recording holds every message: per session, the recorded server text
  frames' payloads equal the messages this client read (count and SHA-256), and every
  session ends `complete`.

CPU placement (--pin): by default every process runs on one CPU, so the figures are CPU
work and the baseline is steady. Left to the scheduler on a 2-vCPU VM (--pin none), direct
flips between ~25 ms and ~55 ms for 10,000 events from one run to the next (cross-CPU
wake-ups of an idle vCPU are slow), which moves every ratio by 2x.
"""

from __future__ import annotations

import argparse
import bisect
import contextlib
import dataclasses
import gc
import hashlib
import json
import os
import select
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from urllib.parse import urlsplit

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from streamscope.recording import RecordingIndex  # noqa: E402

# The recorder's goals (from the issue), and mitmproxy as measured there for reference.
GOAL_RATIO = 1.5  # unpaced total, as a ratio to direct
GOAL_P50_MS = 0.3  # added per-event latency, p50, at 5 ms pacing
GOAL_FIRST_MS = 3.0  # added time to first event at 5 ms pacing
MITM_REFERENCE = "mitmproxy in the issue: 1.74x, first +8.2 ms, p50 +0.37 ms, p99 +0.63 ms"

_TERMINATOR = b"\r\n0\r\n\r\n"  # the end of a chunked body (after the last chunk's CRLF)
_FP = b'"system_fingerprint":"fp_'


# -- processes


class Proc:
    """A child process with stdout and stderr in files; stop() ends it, whatever it takes."""

    def __init__(
        self, name: str, argv: list[str], tmp: str, stop_signal: int, cpus: set[int] | None = None
    ) -> None:
        self.name = name
        self.stop_signal = stop_signal
        self.out_path = os.path.join(tmp, f"{name}.out")
        self.err_path = os.path.join(tmp, f"{name}.err")
        pin = None if cpus is None else (lambda: os.sched_setaffinity(0, cpus))
        with open(self.out_path, "wb") as out, open(self.err_path, "wb") as err:
            self.popen = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err, preexec_fn=pin
            )

    def first_line(self, timeout: float = 30.0) -> str:
        """The first line the process printed on stdout (it has flushed it)."""
        deadline = time.monotonic() + timeout
        while True:
            with open(self.out_path, "rb") as f:
                text = f.read()
            if b"\n" in text:
                return text.split(b"\n", 1)[0].decode().strip()
            if self.popen.poll() is not None:
                raise RuntimeError(f"{self.name} exited ({self.popen.returncode}):\n{self.tail()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.name} printed nothing in {timeout} s:\n{self.tail()}")
            time.sleep(0.01)

    def wait_listening(self, port: int, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                return
            if self.popen.poll() is not None:
                raise RuntimeError(f"{self.name} exited ({self.popen.returncode}):\n{self.tail()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.name} not listening after {timeout} s:\n{self.tail()}")
            time.sleep(0.05)

    def tail(self, lines: int = 15) -> str:
        try:
            with open(self.err_path, "rb") as f:
                text = f.read().decode(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def stop(self, grace: float = 15.0) -> int | None:
        """Its stop signal, then SIGTERM, then SIGKILL; its exit status."""
        p = self.popen
        for sig, wait in ((self.stop_signal, grace), (signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
            if p.poll() is not None:
                break
            with contextlib.suppress(ProcessLookupError):
                p.send_signal(sig)
            with contextlib.suppress(subprocess.TimeoutExpired):
                p.wait(wait)
        return p.poll()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# -- the client


@dataclasses.dataclass
class Target:
    name: str
    port: int
    prefix: str  # the path before /chat/completions
    sock: socket.socket | None = None

    def connect(self) -> None:
        self.close()
        self.sock = socket.create_connection(("127.0.0.1", self.port), timeout=60)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None

    def request(self, events: int, pace_ms: float) -> bytes:
        body = json.dumps(
            {
                "model": "gpt-4o-mini",
                "messages": [{"role": "user", "content": "Write src/streaming/relay.py."}],
                "tools": [
                    {
                        "type": "function",
                        "function": {
                            "name": "write_file",
                            "parameters": {
                                "type": "object",
                                "properties": {
                                    "path": {"type": "string"},
                                    "content": {"type": "string"},
                                    "overwrite": {"type": "boolean"},
                                },
                            },
                        },
                    }
                ],
                "stream": True,
                "x_bench": {"events": events, "pace_ms": pace_ms},
            }
        ).encode()
        head = (
            f"POST {self.prefix}/chat/completions HTTP/1.1\r\n"
            f"host: 127.0.0.1:{self.port}\r\n"
            "accept: application/json\r\ncontent-type: application/json\r\n"
            "user-agent: OpenAI/Python 1.99.0\r\n"
            "authorization: Bearer sk-bench-not-a-real-key\r\n"
            f"content-length: {len(body)}\r\n\r\n"
        )
        return head.encode() + body


@dataclasses.dataclass
class Result:
    total_ns: int  # request sent -> end of the response
    first_ns: int  # request sent -> first whole event
    latencies: list[int]  # per event: arrival here - the upstream's send time
    events: int
    body_len: int
    body_sha: str
    reads: int  # recv calls that returned data


def exchange(target: Target, req: bytes, expect_events: int) -> Result:
    """Send one request on target's connection and read the whole response, timing reads."""
    sock = target.sock
    assert sock is not None
    recv = sock.recv
    now = time.monotonic_ns
    parts: list[bytes] = []
    ends: list[int] = []  # cumulative raw bytes after each read
    times: list[int] = []  # when each read returned
    total = 0
    head_end = -1
    length = -1  # content-length, else -1
    chunked = False
    tail = b""
    t0 = now()
    sock.sendall(req)
    while True:
        data = recv(262144)
        t = now()
        if not data:
            if head_end >= 0 and not chunked and length < 0:
                break  # a close-delimited body
            raise ConnectionError(f"{target.name} closed the connection mid-response")
        parts.append(data)
        total += len(data)
        ends.append(total)
        times.append(t)
        if head_end < 0:
            raw = b"".join(parts)
            i = raw.find(b"\r\n\r\n")
            if i < 0:
                continue
            head_end = i + 4
            status, headers = _parse_head(raw[:i])
            if status != 200:
                raise RuntimeError(f"{target.name}: HTTP {status}: {raw[head_end:][:300]!r}")
            chunked = "chunked" in headers.get("transfer-encoding", "").lower()
            if not chunked and "content-length" in headers:
                length = int(headers["content-length"])
            tail = raw[-7:]
        else:
            tail = data[-7:] if len(data) >= 7 else (tail + data)[-7:]
        if chunked:
            if tail == _TERMINATOR:
                break
        elif length >= 0 and total - head_end >= length:
            break
    raw = b"".join(parts)
    body, segments = _dechunk(raw, head_end) if chunked else (raw[head_end:], [(head_end, 0)])
    seg_body = [b for _, b in segments]

    def arrival(body_end: int) -> int:
        """When the read holding body byte body_end - 1 returned."""
        s = bisect.bisect_right(seg_body, body_end - 1) - 1
        raw_pos = segments[s][0] + (body_end - 1 - segments[s][1])
        return times[bisect.bisect_right(ends, raw_pos)]

    latencies, first, pos, events = [], -1, 0, 0
    find = body.find
    while True:
        e = find(b"\n\n", pos)
        if e < 0:
            break
        e += 2
        at = arrival(e)
        if first < 0:
            first = at
        f = find(_FP, pos, e)
        if f >= 0:
            f += len(_FP)
            sent = int(body[f : find(b'"', f, e)])
            latencies.append(at - sent)
            events += 1
        pos = e
    if events != expect_events:
        raise RuntimeError(f"{target.name}: {events} events, expected {expect_events}")
    if not body.endswith(b"data: [DONE]\n\n"):
        raise RuntimeError(f"{target.name}: the body does not end with data: [DONE]")
    return Result(
        total_ns=times[-1] - t0,
        first_ns=first - t0,
        latencies=latencies,
        events=events,
        body_len=len(body),
        body_sha=hashlib.sha256(body).hexdigest(),
        reads=len(times),
    )


def _parse_head(head: bytes) -> tuple[int, dict[str, str]]:
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ", 2)[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return status, headers


def _dechunk(raw: bytes, pos: int) -> tuple[bytes, list[tuple[int, int]]]:
    """The body of a chunked message from raw[pos:], and (raw offset, body offset) of each
    chunk's data. Checks that the message ends exactly at the end of raw."""
    out: list[bytes] = []
    segments: list[tuple[int, int]] = []
    n = 0
    while True:
        nl = raw.index(b"\r\n", pos)
        size = int(raw[pos:nl].split(b";", 1)[0], 16)
        start = nl + 2
        if size == 0:
            if raw[start:] != b"\r\n":
                raise RuntimeError(f"trailing bytes after the last chunk: {raw[start:][:80]!r}")
            return b"".join(out), segments
        segments.append((start, n))
        out.append(raw[start : start + size])
        n += size
        pos = start + size
        if raw[pos : pos + 2] != b"\r\n":
            raise RuntimeError(f"bad chunk framing at byte {pos}")
        pos += 2


def ready(target: Target) -> Result:
    """A warm, open connection: a 2-event request on it (reconnecting once if it is stale)."""
    for attempt in (1, 2):
        try:
            if target.sock is None or select.select([target.sock], [], [], 0)[0]:
                target.connect()  # none yet, or the server closed it (readable at EOF)
            return exchange(target, target.request(2, 0), 2)
        except (ConnectionError, OSError):
            target.close()
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


# -- the benchmark


def pct(values: list[int], q: float) -> float:
    """The q-th percentile (nearest rank) of values, in ms."""
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(q / 100 * len(s)) - 1))] / 1e6


def run_rounds(
    targets: list[Target], rounds: int, events: int, pace_ms: float, recorded: list[Result]
) -> dict[str, list[Result]]:
    """`rounds` measured requests per target, taking turns; `recorded` gets every result
    (warm-ups too) of the requests sent through the recorder, in order."""
    results: dict[str, list[Result]] = {t.name: [] for t in targets}
    for r in range(rounds):
        order = targets[r % len(targets) :] + targets[: r % len(targets)]
        for t in order:
            warm = ready(t)
            gc.collect()
            res = exchange(t, t.request(events, pace_ms), events)
            results[t.name].append(res)
            if t.name == "recorder":
                recorded += (warm, res)
    return results


def check_recording(path: str, sent: list[Result]) -> tuple[bool, str]:
    """Each exchange's recorded chunks, joined, against the body the client received."""
    problems = []
    recorded_bytes = received_bytes = 0
    with RecordingIndex.open(path) as idx:
        ids = idx.exchanges()
        if len(ids) != len(sent):
            problems.append(f"{len(ids)} exchanges recorded for {len(sent)} requests")
        for x, res in zip(ids, sent, strict=False):  # counts compared above
            h = hashlib.sha256()
            n = 0
            for chunk in idx.chunks(x):
                data = chunk.data_bytes
                h.update(data)
                n += len(data)
            recorded_bytes += n
            received_bytes += res.body_len
            end = idx.exchange(x).end
            reason = idx.line(end).reason if end else None
            if n != res.body_len or h.hexdigest() != res.body_sha:
                problems.append(f"exchange {x}: {n:,} bytes recorded, {res.body_len:,} received")
            if reason != "complete":
                problems.append(f"exchange {x}: ends {reason!r}")
    text = (
        f"{len(ids)} exchanges, {received_bytes:,} body bytes received, {recorded_bytes:,} "
        "recorded; " + ("equal per exchange (length and SHA-256): OK" if not problems else "")
    )
    if problems:
        text += "MISMATCH: " + "; ".join(problems[:5])
    return not problems, text


def layout(pin: str) -> tuple[set[int] | None, set[int] | None, str]:
    """(CPUs for the upstream and this client, CPUs for the proxies, a description)."""
    cpus = sorted(os.sched_getaffinity(0))
    if pin == "none":
        return None, None, "not pinned: the scheduler places the processes"
    if pin == "split" and len(cpus) >= 2:
        a, b = {cpus[0]}, {cpus[1]}
        return a, b, f"upstream and client on CPU {cpus[0]}, the proxy on CPU {cpus[1]}"
    one = {cpus[-1]}
    return one, one, f"every process on CPU {cpus[-1]}"


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--events", type=int, default=10_000, help="unpaced events (10,000)")
    parser.add_argument("--paced-events", type=int, default=400, help="paced events (400)")
    parser.add_argument("--pace-ms", type=float, default=5.0, help="pacing (5 ms)")
    parser.add_argument("--runs", type=int, default=5, help="paced runs per target (5)")
    parser.add_argument(
        "--unpaced-runs",
        type=int,
        default=25,
        help="unpaced runs per target (25: each takes ~50 ms, and direct's time alone moves "
        "by 2x from one run to the next, so a median of 5 moved the ratio by 0.3)",
    )
    parser.add_argument("--quick", action="store_true", help="3 runs, 200 paced events")
    parser.add_argument(
        "--pin",
        choices=("one", "split", "none"),
        default="one",
        help="CPU placement: one (default): every process on one CPU, so a figure is CPU work, "
        "not cross-CPU wake-ups; split: upstream and client on one CPU, the proxy on another; "
        "none: not pinned (on a 2-vCPU VM, direct's time then flips between two modes)",
    )
    parser.add_argument("--no-mitm", action="store_true", help="skip mitmproxy")
    parser.add_argument(
        "--websocket", action="store_true", help="the WebSocket relay instead of HTTP (above)"
    )
    parser.add_argument(
        "--no-compression", action="store_true", help="--websocket: no permessage-deflate"
    )
    parser.add_argument("--keep", action="store_true", help="keep the temp dir")
    args = parser.parse_args()
    if args.quick:
        args.runs = min(args.runs, 3)
        args.unpaced_runs = min(args.unpaced_runs, 9)
        args.paced_events = min(args.paced_events, 200)
    if args.websocket:
        from benchmarks.bench_proxy_ws import main_ws

        return main_ws(args)

    # SIGINT (even when started with it ignored, as in a background job), SIGTERM and SIGHUP
    # all end this process through the finally blocks below, which stop every child.
    def interrupted(signum: int, _frame: object) -> None:
        raise KeyboardInterrupt(signal.Signals(signum).name)

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, interrupted)

    near, far, placement = layout(args.pin)
    if near is not None:
        os.sched_setaffinity(0, near)
    tmp = tempfile.mkdtemp(prefix="bench_proxy-")
    procs: list[Proc] = []
    targets: list[Target] = []
    notes = [f"layout: {placement} (--pin {args.pin})"]
    ok = False
    try:
        up = Proc(
            "upstream",
            [sys.executable, os.path.join(HERE, "sse_upstream.py"), "--port", "0"],
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
        targets = [Target("direct", up_port, "/v1"), Target("recorder", base.port, base.path)]
        mitmdump = None if args.no_mitm else shutil.which("mitmdump")
        if mitmdump:
            port = free_port()
            argv = [mitmdump, "--mode", f"reverse:http://127.0.0.1:{up_port}"]
            argv += ["--listen-host", "127.0.0.1", "--listen-port", str(port)]
            argv += ["--set", "stream_large_bodies=1", "-q"]
            argv += ["--set", f"confdir={os.path.join(tmp, 'mitmproxy')}"]
            mitm = Proc("mitmproxy", argv, tmp, signal.SIGINT, far)
            procs.append(mitm)
            mitm.wait_listening(port)
            targets.append(Target("mitmproxy", port, "/v1"))
        else:
            notes.append(
                "mitmproxy: skipped ("
                + ("--no-mitm" if args.no_mitm else "no mitmdump on PATH")
                + ")"
            )

        sent: list[Result] = []
        gc.disable()
        # Warm every process up (imports, caches, the upstream's event templates) with one
        # round of each kind of request.
        run_rounds(targets, 1, args.events, 0, sent)
        run_rounds(targets, 1, args.paced_events, 0, sent)
        unpaced = run_rounds(targets, args.unpaced_runs, args.events, 0, sent)
        paced = run_rounds(targets, args.runs, args.paced_events, args.pace_ms, sent)
        gc.enable()
        for t in targets:
            t.close()
        status = rec.stop()
        if status != 0:
            last = (rec.tail(1) or "(nothing on stderr)").strip()
            notes.append(f"streamscope proxy exited with status {status} on SIGINT: {last}")
        ok, check = check_recording(recording, sent)
        notes.append(f"recording: {check}")
        report(args, targets, unpaced, paced, notes)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
    except Exception:
        for p in procs:
            if p.tail():
                print(f"--- {p.name} stderr (last lines):\n{p.tail()}", file=sys.stderr)
        raise
    finally:
        for t in targets:
            t.close()
        for p in reversed(procs):
            p.stop()
        if args.keep:
            print(f"files kept in {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0 if ok else 1


def report(args, targets, unpaced, paced, notes) -> None:
    names = [t.name for t in targets]
    ms = 1e6
    total = {n: statistics.median(r.total_ns for r in unpaced[n]) / ms for n in names}
    lo = {n: min(r.total_ns for r in unpaced[n]) / ms for n in names}
    hi = {n: max(r.total_ns for r in unpaced[n]) / ms for n in names}
    reads = {n: statistics.median(r.reads for r in unpaced[n]) for n in names}
    first = {n: statistics.median(r.first_ns for r in paced[n]) / ms for n in names}
    lats = {n: [x for r in paced[n] for x in r.latencies] for n in names}
    p50 = {n: pct(lats[n], 50) for n in names}
    p99 = {n: pct(lats[n], 99) for n in names}
    ratio = {n: total[n] / total["direct"] for n in names}
    per_event = {n: (total[n] - total["direct"]) / args.events * 1000 for n in names}

    def goal(value: float, limit: float, unit: str) -> str:
        return f"<= {limit:g}{unit}  " + ("met" if value <= limit else "MISSED")

    def added(d: dict[str, float], fmt: str) -> dict[str, str]:
        return {n: format(d[n] - d["direct"], fmt) for n in names if n != "direct"}

    rows = [
        (f"unpaced, {args.events:,} events", {}, ""),
        ("  total, ms (median)", {n: f"{total[n]:.1f}" for n in names}, ""),
        ("  min-max, ms", {n: f"{lo[n]:.1f}-{hi[n]:.1f}" for n in names}, ""),
        ("  reads by the client", {n: f"{reads[n]:.0f}" for n in names}, ""),
        (
            "  ratio to direct",
            {n: f"{ratio[n]:.2f}x" for n in names},
            goal(ratio["recorder"], GOAL_RATIO, "x"),
        ),
        ("  added per event, us", added(per_event, "+.1f"), ""),
        (f"paced at {args.pace_ms:g} ms, {args.paced_events} events", {}, ""),
        ("  first event, ms (median)", {n: f"{first[n]:.2f}" for n in names}, ""),
        (
            "    added",
            added(first, "+.2f"),
            goal(first["recorder"] - first["direct"], GOAL_FIRST_MS, " ms"),
        ),
        ("  latency p50, ms", {n: f"{p50[n]:.3f}" for n in names}, ""),
        (
            "    added",
            added(p50, "+.3f"),
            goal(p50["recorder"] - p50["direct"], GOAL_P50_MS, " ms"),
        ),
        ("  latency p99, ms", {n: f"{p99[n]:.3f}" for n in names}, ""),
        ("    added", added(p99, "+.3f"), "(no goal)"),
    ]
    w = 12
    print(
        f"bench_proxy: {args.unpaced_runs} unpaced and {args.runs} paced runs per target, "
        "targets taking turns; p50/p99 over every paced event of every run"
    )
    print(f"{'':32}" + "".join(f"{n:>{w}}" for n in names) + "   recorder's goal")
    for label, cells, g in rows:
        line = (
            f"{label:32}" + "".join(f"{cells.get(n, ''):>{w}}" for n in names) if cells else label
        )
        print((line + "   " + g).rstrip() if g else line)
    for note in notes:
        print(note)
    print(f"reference: {MITM_REFERENCE}")


if __name__ == "__main__":
    sys.exit(main())
