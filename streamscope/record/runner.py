"""`streamscope record -- CMD`: the proxy in a thread, the command as a child, a summary."""

from __future__ import annotations

import os
import signal
import subprocess
from datetime import datetime, timezone

from ..recording import RecordingWriter
from ..text import plural, say
from .loopback import bind
from .proxy import ProxyServer, Upstream

BASE_URL_VARS = ("OPENAI_BASE_URL", "OPENAI_API_BASE")


def default_output(cwd: str | None = None) -> str:
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    folder = os.path.join(cwd or os.getcwd(), "recordings")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"streamscope-{stamp}.jsonl")
    n = 1
    while os.path.exists(path):  # two recordings in the same second
        n += 1
        path = os.path.join(folder, f"streamscope-{stamp}-{n}.jsonl")
    return path


def _terminal_delivers_sigint() -> bool:
    """Ctrl-C in a terminal already reaches the child (same foreground process group)."""
    try:
        return os.isatty(0) and os.tcgetpgrp(0) == os.getpgrp()
    except OSError:
        return False


def run_child(command: list[str], env_names: list[str], base_url: str) -> int:
    """Run `command` with the base-URL variables pointing at the proxy; its exit status."""
    env = dict(os.environ)
    for name in (*BASE_URL_VARS, *env_names):
        env[name] = base_url
    try:
        child = subprocess.Popen(command, env=env)
    except FileNotFoundError:
        say(f"cannot run {command[0]!r}: no such command")
        return 127
    except PermissionError:
        say(f"cannot run {command[0]!r}: permission denied")
        return 126

    def forward(signum: int, _frame: object) -> None:
        if signum == signal.SIGINT and _terminal_delivers_sigint():
            return  # the terminal sent it to the child too; a second one would cut its cleanup
        if child.poll() is None:
            child.send_signal(signum)

    previous = {sig: signal.signal(sig, forward) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        while True:
            try:
                status = child.wait()
                break
            except KeyboardInterrupt:  # pragma: no cover - the handler above takes SIGINT
                continue
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 128 - status if status < 0 else status


def record(
    command: list[str],
    upstream_url: str,
    output: str | None,
    port: int,
    env_names: list[str],
    redact: bool,
    redact_json: list[str],
    timeout: float | None,
) -> int:
    upstream = Upstream.parse(upstream_url)
    path = output or default_output()
    argv = ["streamscope", "record", "--", *command]
    sock = bind(port)  # first: a busy port must not leave an empty recording behind
    try:
        writer = RecordingWriter(path, argv=argv, redact=redact, redact_json=tuple(redact_json))
    except BaseException:
        sock.close()
        raise
    with writer:
        server = ProxyServer(upstream, writer, port, timeout, sock=sock)
        server.start()
        say(f"recording {upstream.origin}{upstream.prefix} through {server.base_url} into {path}")
        try:
            status = run_child(command, env_names, server.base_url)
        finally:
            server.stop()
    summarize(path)
    return status


def summarize(path: str) -> None:
    """The short summary printed when the child exits."""
    from collections import Counter

    from ..analysis import analyze
    from ..recording.format import RecordingError

    try:
        analysis = analyze(path)
    except RecordingError as e:
        say(f"the recording could not be read back: {e}")
        return
    by_severity: dict[str, Counter[str]] = {
        "error": Counter(),
        "warning": Counter(),
        "info": Counter(),
    }
    entries: Counter[str] = Counter()  # as inspect counts them: one per kind, choice, index
    for stream in analysis.streams:
        for a in stream.anomalies:
            by_severity[a.severity][a.kind] += a.count
            entries[a.severity] += 1
    contract = Counter(f.kind for f in analysis.contract)
    say(
        f"{plural(len(analysis.exchanges), 'exchange')}, {plural(len(analysis.streams), 'stream')} recorded in {path}"
    )
    for severity, kinds in by_severity.items():
        if kinds:
            listed = ", ".join(f"{k} x{n}" for k, n in kinds.most_common())
            say(f"{plural(entries[severity], severity)}: {listed}")
    if analysis.failures:
        failed = "; ".join(f"{f.exchange}: {f.message[:80]}" for f in analysis.failures[:3])
        say(f"{plural(len(analysis.failures), 'exchange')} failed: {failed}")
    if contract:
        say(
            "conversation contract broken: "
            + ", ".join(f"{k} x{n}" for k, n in contract.most_common())
        )
    if (
        not any(by_severity.values())
        and not contract
        and not analysis.failures
        and analysis.streams
    ):
        say("no anomalies, the conversation contract holds")
    say(f"replay it: streamscope replay {path}   (or: streamscope inspect {path})")
