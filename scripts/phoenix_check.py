#!/usr/bin/env python3
"""Send a recording's OTLP export to a real Arize Phoenix and read it back from Phoenix's
API: one trace per conversation, one span per exchange, each stream's tool calls on its
span and each finding as a `streamscope.*` span event.

    scripts/phoenix_check.py                        # the bundled sample (see below)
    scripts/phoenix_check.py RECORDING              # any recording
    scripts/phoenix_check.py --phoenix /path/to/phoenix-venv/bin/python
    scripts/phoenix_check.py --install              # pip install arize-phoenix first
    scripts/phoenix_check.py --install-only         # only that (scripts/check: in the background)

Phoenix is found at --phoenix (a Python that has it), else $STREAMSCOPE_PHOENIX_PYTHON,
else .tools/phoenix/bin/python (where --install puts it: `pip install arize-phoenix` into
a venv of its own, in this checkout), else the Python running this script. It is started
on 127.0.0.1 at a free port, in a temporary folder that holds its SQLite database, with
its telemetry, its requests to the internet, its assistant and its MCP server off and its
gRPC receiver not started (only OTLP over HTTP is used); it is stopped (its whole process
group) when the check ends, passes, fails or is interrupted.

Then `streamscope export RECORDING --format otlp --otlp-endpoint URL` runs (the real
CLI, in a child process; --include-content adds that option), the spans are read back
(`GET /v1/projects`, then each project's `GET /v1/projects/{name}/spans`) until they stop
arriving (at most --timeout seconds), and what `streamscope`'s own analysis of the
recording says is compared with them:

- one trace per conversation, holding exactly its exchanges' spans (and the
  conversation's own span over them);
- one span per exchange (a WebSocket session: one per response);
- every tool call streamed in an exchange (its id and name) on that exchange's span, and
  whether Phoenix reads it as a tool call of the span's output messages;
- every anomaly on its exchange's span, and every contract finding in its conversation's
  trace, as an event whose name begins with `streamscope.` and that names the kind.

The default recording joins two bundled samples, openai.jsonl and
anthropic-spliced-message.jsonl: two conversations of two exchanges each, four tool calls,
anomalies and contract findings. Exit status 0 when every check passes, 1 when one fails
(or Phoenix cannot be started or read), 2 for a usage error. The report names kinds,
tools and ids only, shown safe (a recording's text is untrusted).

--stand-in sends an OTLP export this script builds itself (the same layout, from the same
analysis) instead of running the CLI: for checking the Phoenix side (start, read-back,
stop) where this streamscope has no OTLP export.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# (only the standard library: `--install-only` runs while streamscope's own dependencies
# are still being installed; the analysis is imported where the check runs)
from streamscope.text import plural, quote, visible  # noqa: E402

if TYPE_CHECKING:
    from streamscope.analysis.driver import Analysis

DEFAULT_SAMPLES = ("openai.jsonl", "anthropic-spliced-message.jsonl")
TOOLS = ROOT / ".tools" / "phoenix"
EVENT_PREFIX = "streamscope."

# Phoenix runs with the stock `phoenix serve`, its gRPC receiver left out: that one binds
# every interface, and OTLP over HTTP is all the check uses.
LAUNCHER = """
import sys
try:
    from phoenix.server import grpc_server
    _init = grpc_server.GrpcServer.__init__
    def _without_grpc(self, *args, **kwargs):
        kwargs["disabled"] = True
        _init(self, *args, **kwargs)
    grpc_server.GrpcServer.__init__ = _without_grpc
except Exception as e:
    print(f"phoenix_check: Phoenix's gRPC receiver stays on ({e!r})", file=sys.stderr)
from phoenix.server.main import main
sys.argv[0] = "phoenix"
sys.exit(main())
"""

# OTLP/JSON to OTLP protobuf with opentelemetry-proto (a Phoenix dependency): strict, so
# a field the protocol does not have fails. OTLP/JSON writes trace and span ids in hex
# where protobuf's JSON mapping has base64: they are turned into base64 first.
TO_PROTOBUF = """
import base64, json, sys
from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
IDS = {"traceId": 16, "spanId": 8, "parentSpanId": 8}
def ids(value):
    if isinstance(value, list):
        return [ids(v) for v in value]
    if not isinstance(value, dict):
        return value
    out = {}
    for k, v in value.items():
        if k in IDS and isinstance(v, str) and v:
            raw = bytes.fromhex(v)
            if len(raw) != IDS[k]:
                sys.exit(f"{k} {v!r} is not {IDS[k]} bytes")
            v = base64.b64encode(raw).decode()
        out[k] = ids(v)
    return out
document = ids(json.loads(sys.stdin.buffer.read()))
message = json_format.Parse(json.dumps(document), ExportTraceServiceRequest())
sys.stdout.buffer.write(message.SerializeToString())
"""

PHOENIX_ENV = {
    "PHOENIX_TELEMETRY_ENABLED": "false",
    "PHOENIX_ALLOW_EXTERNAL_RESOURCES": "false",
    "PHOENIX_DISABLE_AGENT_ASSISTANT": "true",
    "PHOENIX_ENABLE_MCP_SERVER": "false",
}


class CheckError(Exception):
    """The check cannot go on: one line saying why."""


# -- what streamscope says of the recording ---------------------------------------------


@dataclass
class Expected:
    """An exchange as streamscope's analysis reads it."""

    exchange: int
    conversation: int
    start_ns: int
    calls: list[tuple[object, object]] = field(default_factory=list)  # (id, name)
    anomalies: set[str] = field(default_factory=set)
    contract: set[str] = field(default_factory=set)  # findings about this exchange
    spans: int = 1  # a WebSocket session: one per response
    per: str = "exchange"


def expected(a: Analysis) -> dict[int, Expected]:
    out: dict[int, Expected] = {}
    for info in a.exchanges:
        ex = info.exchange
        out[ex] = Expected(ex, a.conversations.get(ex, ex), info.start_ns or 0)
    for s in a.streams:
        e = out.setdefault(s.exchange, Expected(s.exchange, s.exchange, 0))
        if s.turn is not None:
            e.spans, e.per = sum(x.exchange == s.exchange for x in a.streams), "response"
        e.calls += [(c.id, c.name) for c in s.tool_calls]
        e.anomalies |= {x.kind for x in s.anomalies}
    for f in a.contract:
        if f.exchange in out:
            out[f.exchange].contract.add(f.kind)
    return out


# -- Phoenix ------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


HAS_PHOENIX = "import importlib.util, sys; sys.exit(importlib.util.find_spec('phoenix') is None)"


def _has_phoenix(python: str) -> bool:
    try:
        return subprocess.run([python, "-c", HAS_PHOENIX], capture_output=True).returncode == 0
    except OSError:
        return False


def find_phoenix(given: str | None) -> str:
    """The Python to run Phoenix with (an absolute path: Phoenix runs in its folder)."""
    for python in (
        given,
        os.environ.get("STREAMSCOPE_PHOENIX_PYTHON"),
        str(TOOLS / "bin" / "python"),
    ):
        if python and (python == given or os.path.exists(python)):
            python = os.path.abspath(python) if os.sep in python else python
            if not _has_phoenix(python):
                raise CheckError(f"{python} has no Phoenix (pip install arize-phoenix into it)")
            return python
    if not _has_phoenix(sys.executable):
        raise CheckError(
            "Phoenix is not installed: run with --install, or pass --phoenix PYTHON "
            "(a Python that has arize-phoenix)"
        )
    return sys.executable


def install() -> None:
    """arize-phoenix into .tools/phoenix, a venv of its own (kept for the next run)."""
    began = time.monotonic()
    python = str(TOOLS / "bin" / "python")
    steps = [[sys.executable, "-m", "venv", str(TOOLS)]] if not os.path.exists(python) else []
    # Without its bytecode compiled up front: its start then takes about 9 s more of one
    # core, where compiling all of it takes 24 s of CPU while the tests need every core.
    steps.append([str(ROOT / "scripts" / "pip-install"), python, "arize-phoenix"])
    for step in steps:
        if subprocess.run(step).returncode:
            raise CheckError(f"could not install Phoenix: {' '.join(step[-3:])} failed")
    print(f"phoenix installed in {time.monotonic() - began:.0f}s ({TOOLS})", flush=True)


class Phoenix:
    """A Phoenix server on 127.0.0.1 in `folder`, its process group stopped on exit."""

    def __init__(self, python: str, folder: Path):
        self.python, self.folder = python, folder
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = folder / "phoenix.log"
        self.process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Phoenix:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PHOENIX_", "OTEL_"))}
        env.update(PHOENIX_ENV)
        env["PHOENIX_WORKING_DIR"] = str(self.folder)
        env["PHOENIX_SQL_DATABASE_URL"] = f"sqlite:///{self.folder}/phoenix.db"
        for proxy in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY"):
            env.pop(proxy, None)
        command = [self.python, "-c", LAUNCHER, "serve", "--host", "127.0.0.1"]
        command += ["--port", str(self.port), "--grpc-port", str(free_port())]
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(
                command,
                cwd=self.folder,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group, stopped whole
            )
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        p, self.process = self.process, None
        if p is None:
            return
        for sig, wait in ((signal.SIGTERM, 15), (signal.SIGKILL, 5)):
            try:
                os.killpg(p.pid, sig)
            except ProcessLookupError:
                break
            try:
                p.wait(wait)
                break
            except subprocess.TimeoutExpired:
                continue

    def tail(self, lines: int = 15) -> str:
        try:
            text = self.log.read_text(errors="replace")
        except OSError:
            return ""
        kept = [line for line in text.splitlines() if "sqlalchemy.engine" not in line]
        return "\n".join(visible(line) for line in kept[-lines:])

    def wait_ready(self, timeout: float) -> float:
        began = time.monotonic()
        while time.monotonic() - began < timeout:
            assert self.process is not None
            if self.process.poll() is not None:
                raise CheckError(f"Phoenix exited ({self.process.returncode}):\n{self.tail()}")
            try:
                with urllib.request.urlopen(f"{self.url}/healthz", timeout=2) as r:
                    if r.status == 200:
                        return time.monotonic() - began
            except (OSError, urllib.error.URLError):
                pass
            time.sleep(0.25)
        raise CheckError(f"Phoenix was not ready in {timeout:.0f}s:\n{self.tail()}")

    def get(self, path: str) -> dict:
        try:
            with urllib.request.urlopen(f"{self.url}{path}", timeout=10) as r:
                return json.load(r)
        except (OSError, urllib.error.URLError, ValueError) as e:
            raise CheckError(f"GET {path}: {e}") from None

    def spans(self) -> list[dict]:
        """Every span of every project."""
        out: list[dict] = []
        for project in self.get("/v1/projects")["data"]:
            name = urllib.parse.quote(project["name"], safe="")
            cursor = None
            while True:
                query = "limit=1000" + (f"&cursor={urllib.parse.quote(cursor)}" if cursor else "")
                page = self.get(f"/v1/projects/{name}/spans?{query}")
                out += [dict(s, project=project["name"]) for s in page["data"]]
                cursor = page.get("next_cursor")
                if not cursor:
                    break
        return out

    def read_back(self, want: int, timeout: float) -> list[dict]:
        """The spans, once `want` have arrived and no more came for a second (Phoenix
        inserts them in the background)."""
        began, seen, steady = time.monotonic(), -1, 0.0
        spans: list[dict] = []
        while time.monotonic() - began < timeout:
            spans = self.spans()
            if len(spans) != seen:
                seen, steady = len(spans), time.monotonic()
            elif len(spans) >= want and time.monotonic() - steady >= 1.0:
                return spans
            time.sleep(0.25)
        return spans


# -- sending ------------------------------------------------------------------------------


def send_with_cli(recording: Path, phoenix: Phoenix, content: bool) -> None:
    command = [sys.executable, "-m", "streamscope", "export", str(recording)]
    command += ["--format", "otlp", "--otlp-endpoint", phoenix.url]
    command += ["--include-content"] if content else []
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    if done.returncode:
        said = visible(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "")
        raise CheckError(f"streamscope export exited {done.returncode}: {said}")


def send_stand_in(a: Analysis, phoenix: Phoenix) -> None:
    document = json.dumps(stand_in(a)).encode()
    converted = subprocess.run(
        [phoenix.python, "-c", TO_PROTOBUF], input=document, capture_output=True, timeout=60
    )
    if converted.returncode:
        raise CheckError(f"not OTLP: {visible(converted.stderr.decode(errors='replace'))}")
    request = urllib.request.Request(
        f"{phoenix.url}/v1/traces",
        data=converted.stdout,
        headers={"Content-Type": "application/x-protobuf"},
    )
    with urllib.request.urlopen(request, timeout=10) as r:
        if r.status != 200:
            raise CheckError(f"POST /v1/traces: {r.status}")


def _hex_id(size: int, *parts: object) -> str:
    return hashlib.blake2b(repr(parts).encode(), digest_size=size).hexdigest()


def _attr(key: str, value: object) -> dict:
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": str(value)}}


def stand_in(a: Analysis) -> dict:
    """An OTLP/JSON export of `a` in the layout the check reads: a trace per conversation,
    a `conversation` span over a `chat` span per exchange with the GenAI conventions' attributes and its calls in
    `gen_ai.output.messages`, a `streamscope.finding` event per finding."""
    base = time.time_ns() - 60 * 10**9
    streams = {s.exchange: s for s in a.streams}
    findings: dict[int, list[tuple[str, str]]] = {}
    for s in a.streams:
        findings.setdefault(s.exchange, []).extend(("anomaly", x.kind) for x in s.anomalies)
    for f in a.contract:
        findings.setdefault(f.exchange, []).append(("contract", f.kind))
    spans: list[dict[str, Any]] = []
    for info in a.exchanges:
        ex = info.exchange
        conversation = a.conversations.get(ex, ex)
        stream = streams.get(ex)
        attributes = [
            _attr("gen_ai.operation.name", "chat"),
            _attr("gen_ai.request.model", info.model or ""),
            _attr("gen_ai.conversation.id", f"{a.source}#{conversation}"),
            _attr("streamscope.exchange", ex),
        ]
        if stream is not None and stream.tool_calls:
            parts = [
                {"type": "tool_call", "id": c.id, "name": c.name, "arguments": c.arguments}
                for c in stream.tool_calls
            ]
            message = {"role": "assistant", "parts": parts, "finish_reason": "tool_call"}
            attributes.append(_attr("gen_ai.output.messages", json.dumps([message])))
        start = base + (info.start_ns or 0)
        end = base + (info.end_ns or info.start_ns or 0)
        spans.append(
            {
                "traceId": _hex_id(16, a.source, conversation),
                "spanId": _hex_id(8, a.source, ex),
                "parentSpanId": _hex_id(8, a.source, "conversation", conversation),
                "name": f"chat {info.model or ''}".strip(),
                "kind": 3,  # CLIENT
                "startTimeUnixNano": str(start),
                "endTimeUnixNano": str(max(start, end)),
                "attributes": attributes,
                "events": [
                    {
                        "name": f"{EVENT_PREFIX}finding",
                        "timeUnixNano": str(start),
                        "attributes": [
                            _attr("streamscope.source", src),
                            _attr("streamscope.kind", kind),
                        ],
                    }
                    for src, kind in findings.get(ex, [])
                ],
            }
        )
    for conversation in sorted(set(a.conversations.values())):
        mine = [x for x in spans if x["traceId"] == _hex_id(16, a.source, conversation)]
        spans.append(
            {
                "traceId": _hex_id(16, a.source, conversation),
                "spanId": _hex_id(8, a.source, "conversation", conversation),
                "name": "conversation",
                "kind": 1,  # INTERNAL
                "startTimeUnixNano": min((x["startTimeUnixNano"] for x in mine), key=int),
                "endTimeUnixNano": max((x["endTimeUnixNano"] for x in mine), key=int),
                "attributes": [_attr("streamscope.conversation", conversation)],
            }
        )
    resource = {"attributes": [_attr("service.name", "streamscope")]}
    scope = {"scope": {"name": "streamscope"}, "spans": spans}
    return {"resourceSpans": [{"resource": resource, "scopeSpans": [scope]}]}


# -- comparing ----------------------------------------------------------------------------


def _values(value: object) -> Iterator[str]:
    """Every string in an attribute's value, JSON strings opened."""
    if isinstance(value, str):
        yield value
        if value[:1] in ("[", "{"):
            try:
                opened = json.loads(value)
            except ValueError:
                opened = None
            yield from _values(opened)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _values(v)
    elif isinstance(value, list):
        for v in value:
            yield from _values(v)


def _exchange_of(span: dict) -> int | None:
    value = span.get("attributes", {}).get("streamscope.exchange")
    return value if isinstance(value, int) else None


def _phoenix_tool_calls(span: dict) -> list[tuple[object, object]]:
    """The tool calls Phoenix reads in the span's output messages (its OpenInference
    `llm.output_messages.N.message.tool_calls.M.tool_call.*`), (id, name) each; a call
    sent with no id or an empty one has None."""
    calls: dict[str, dict[str, str]] = {}
    for key, value in span.get("attributes", {}).items():
        if key.startswith("llm.output_messages.") and ".message.tool_calls." in key:
            head, _, leaf = key.partition(".tool_call.")
            calls.setdefault(head, {})[leaf] = value
    return [(c.get("id") or None, c.get("function.name")) for c in calls.values()]


@dataclass
class Outcome:
    lines: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)

    passed: int = 0

    def check(self, ok: bool, what: str) -> None:
        self.lines.append(f"  {'ok  ' if ok else 'FAIL'} {what}")
        if ok:
            self.passed += 1
        else:
            self.failed.append(what)

    def note(self, what: str) -> None:
        self.lines.append(f"       {what}")


def compare(want: dict[int, Expected], spans: list[dict]) -> Outcome:
    out = Outcome()
    conversations: dict[int, list[int]] = {}
    for e in sorted(want.values(), key=lambda e: e.exchange):
        conversations.setdefault(e.conversation, []).append(e.exchange)
    traces: dict[str, list[dict]] = {}
    for s in spans:
        traces.setdefault(s["context"]["trace_id"], []).append(s)
    out.check(
        len(traces) == len(conversations),
        f"{plural(len(traces), 'trace')} for {plural(len(conversations), 'conversation')}"
        " (one per conversation)",
    )
    # Which span is which exchange: its streamscope.exchange (a conversation's own span,
    # over its exchanges' spans, has none)
    by_exchange: dict[int, list[dict]] = {}
    for s in spans:
        ex = _exchange_of(s)
        if ex is not None:
            by_exchange.setdefault(ex, []).append(s)
    others = len(spans) - sum(map(len, by_exchange.values()))
    if others:
        out.note(f"({others} other spans: a conversation's own, over its exchanges')")
    for e in sorted(want.values(), key=lambda e: e.exchange):
        n = len(by_exchange.get(e.exchange, []))
        out.check(n == e.spans, f"exchange {e.exchange}: {plural(n, 'span')} (one per {e.per})")
    for first, members in conversations.items():
        got = {s["context"]["trace_id"] for ex in members for s in by_exchange.get(ex, [])}
        mates = {_exchange_of(s) for t in got for s in traces[t]} - {None}
        out.check(
            len(got) == 1 and mates == set(members),
            f"conversation {first} (exchanges {', '.join(map(str, members))}) is one trace",
        )
    for e in sorted(want.values(), key=lambda e: e.exchange):
        mine = by_exchange.get(e.exchange)
        if not mine:
            continue
        span = mine[0]  # a session's responses: their calls and findings on any of them
        strings = {v for s in mine for value in s["attributes"].values() for v in _values(value)}
        for call_id, name in e.calls:
            shown = f"{quote(name, 40)} ({quote(call_id, 40)})"
            out.check(
                (not call_id or call_id in strings) and (not name or name in strings),
                f"exchange {e.exchange}: tool call {shown} on its span",
            )
        if e.calls:
            read = Counter(c for s in mine for c in _phoenix_tool_calls(s))
            missing = Counter((i or None, n) for i, n in e.calls) - read
            out.check(
                not missing,
                f"exchange {e.exchange}: Phoenix reads {len(e.calls) - missing.total()} of "
                f"{len(e.calls)} tool calls in the span's output messages",
            )
        events = [
            ev for s in mine for ev in s.get("events", []) if ev["name"].startswith(EVENT_PREFIX)
        ]
        trace_events = [
            ev
            for s in traces.get(span["context"]["trace_id"], [])
            for ev in s.get("events", [])
            if ev["name"].startswith(EVENT_PREFIX)
        ]

        def named(kind: str, among: list[dict]) -> bool:
            return any(
                kind == ev["name"].removeprefix(EVENT_PREFIX)
                or kind in set(_values(ev.get("attributes", {})))
                for ev in among
            )

        for kind in sorted(e.anomalies):
            out.check(
                named(kind, events), f"exchange {e.exchange}: anomaly {kind} an event of its span"
            )
        for kind in sorted(e.contract):
            out.check(
                named(kind, trace_events),
                f"exchange {e.exchange}: contract finding {kind} an event of its trace",
            )
    return out


def summary(spans: list[dict]) -> list[str]:
    """What Phoenix holds, trace by trace: each span's name, tool calls and events."""
    lines = []
    traces: dict[str, list[dict]] = {}
    for s in spans:
        traces.setdefault(s["context"]["trace_id"], []).append(s)
    for trace_id, members in traces.items():
        project = members[0]["project"]
        lines.append(f"  trace {trace_id} (project {quote(project, 40)}): {len(members)} spans")
        for s in sorted(members, key=lambda s: (_exchange_of(s) or 0, s["start_time"])):
            calls = sorted(_phoenix_tool_calls(s), key=repr)
            events = [ev["name"] for ev in s.get("events", [])]
            kinds = sorted(
                {
                    str(v)
                    for ev in s.get("events", [])
                    for k, v in ev.get("attributes", {}).items()
                    if k.startswith(EVENT_PREFIX) and k.endswith(".kind")
                }
            )
            ex = _exchange_of(s)
            lines.append(
                f"    span {quote(s['name'], 60)} kind {s.get('span_kind')}"
                f" {'exchange ' + str(ex) if ex is not None else 'over the exchanges'}: tool calls "
                f"{', '.join(quote(n, 30) for _, n in calls) or 'none'}; "
                f"{len(events)} events {', '.join(sorted(set(map(visible, events))))}"
                + (f" ({', '.join(map(visible, kinds))})" if kinds else "")
            )
    return lines


# -- the run ------------------------------------------------------------------------------


def default_recording(folder: Path) -> Path:
    from streamscope.bundled import samples_folder
    from streamscope.conformance.cases import joined

    samples = samples_folder()
    if samples is None:
        raise CheckError("this installation has no bundled samples: name a RECORDING")
    parts = [(os.path.join(samples, name), n) for name in DEFAULT_SAMPLES for n in (1, 2)]
    path = folder / "two-conversations.jsonl"
    path.write_bytes(joined(parts))
    return path


def run(args: argparse.Namespace) -> int:
    if args.install or args.install_only:
        install()
    if args.install_only:
        return 0
    from streamscope.analysis.driver import analyze
    from streamscope.recording.format import RecordingError

    python = find_phoenix(args.phoenix)
    with tempfile.TemporaryDirectory(prefix="streamscope-phoenix-") as tmp:
        folder = Path(tmp)
        recording = Path(args.recording) if args.recording else default_recording(folder)
        try:
            a = analyze(recording)
        except (RecordingError, OSError) as e:
            raise CheckError(visible(str(e))) from None
        want = expected(a)
        with Phoenix(python, folder) as phoenix:
            began = time.monotonic()
            ready = phoenix.wait_ready(args.ready_timeout)
            print(f"phoenix ready at {phoenix.url} in {ready:.1f}s", flush=True)
            sent = time.monotonic()
            if args.stand_in:
                send_stand_in(a, phoenix)
            else:
                send_with_cli(recording, phoenix, args.include_content)
            spans = phoenix.read_back(len(want), args.timeout)
            print(
                f"sent ({'stand-in' if args.stand_in else 'streamscope export'}) and read "
                f"back {len(spans)} spans in {time.monotonic() - sent:.1f}s",
                flush=True,
            )
            outcome = compare(want, spans)
            print(f"recording {quote(str(recording.name), 80)}: {len(want)} exchanges")
            print("what Phoenix holds:")
            print("\n".join(summary(spans)) or "  nothing")
            print("checks:")
            print("\n".join(outcome.lines))
            print(
                f"phoenix check: {outcome.passed} passed, "
                f"{len(outcome.failed)} failed ({time.monotonic() - began:.1f}s with Phoenix up)"
            )
            return 1 if outcome.failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "recording", nargs="?", help="a recording (default: two bundled samples joined)"
    )
    parser.add_argument("--phoenix", help="a Python that has arize-phoenix")
    parser.add_argument(
        "--install", action="store_true", help="pip install arize-phoenix into .tools/phoenix first"
    )
    parser.add_argument(
        "--install-only", action="store_true", help="pip install arize-phoenix, and stop"
    )
    parser.add_argument(
        "--include-content",
        action="store_true",
        help="export with --include-content (the text, arguments and results too)",
    )
    parser.add_argument(
        "--stand-in", action="store_true", help="send this script's own OTLP export"
    )
    parser.add_argument("--timeout", type=float, default=60, help="seconds to wait for the spans")
    parser.add_argument(
        "--ready-timeout", type=float, default=180, help="seconds to wait for Phoenix"
    )
    args = parser.parse_args(argv)
    # Interrupted or stopped, Phoenix is stopped too (SIGINT even where it was ignored)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    try:
        return run(args)
    except CheckError as e:
        print(f"phoenix check: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("phoenix check: interrupted", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
