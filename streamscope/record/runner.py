"""`streamscope record -- CMD`: the proxy in a thread, the command as a child, a summary."""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import subprocess
import sys
from collections.abc import Sequence
from datetime import datetime, timezone

from .. import agents
from ..http.loopback import bind
from ..marks import counted
from ..recording import RecordingWriter
from ..recording.private import private_folders
from ..text import plural, say, times, visible
from .proxy import ProxyServer, Upstream


def default_output(cwd: str | None = None) -> str:
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    folder = os.path.join(cwd or os.getcwd(), "recordings")
    private_folders(folder)  # 0700 when made here: recordings are private (private.py)
    path = os.path.join(folder, f"streamscope-{stamp}.jsonl")
    n = 1
    while os.path.exists(path):  # two recordings in the same second
        n += 1
        path = os.path.join(folder, f"streamscope-{stamp}-{n}.jsonl")
    return path


# The signals that stop `proxy` and `record` (forwarded to the child by `record`).
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class StartError(Exception):
    """The recorder cannot start: one line naming the port or the file; exit status 2."""


def _terminal_delivers_sigint() -> bool:
    """Ctrl-C in a terminal already reaches the child (same foreground process group)."""
    try:
        return os.isatty(0) and os.tcgetpgrp(0) == os.getpgrp()
    except OSError:
        return False


def cannot_run(command: list[str]) -> tuple[int, str] | None:
    """(127 or 126, why) when `command` cannot be run, checked before anything is created."""
    exe = command[0]
    found = exe if os.sep in exe else shutil.which(exe)
    if found is None:
        # which() skips files that are not executable; say "permission denied" for those
        on_path = (os.path.join(d, exe) for d in os.get_exec_path())
        if any(os.path.isfile(p) for p in on_path):
            return 126, f"cannot run {exe!r}: permission denied"
        return 127, f"cannot run {exe!r}: no such command"
    if not os.path.exists(found):
        return 127, f"cannot run {exe!r}: no such file"
    if os.path.isdir(found) or not os.access(found, os.X_OK):
        return 126, f"cannot run {exe!r}: not an executable file"
    return None


def base_url_variables(server: ProxyServer, env_names: list[str]) -> dict[str, str]:
    """The variables that point the command at the proxy: each side's (providers.py) at
    that side, and every --env NAME (which wins) at the default side."""
    variables = {}
    for route in server.routes:
        for name in route.side.env:
            variables[name] = server.base_url_of(route.side.name) or ""
    for name in env_names:
        variables[name] = server.base_url
    return variables


def run_child(command: list[str], variables: dict[str, str], stopped: list[int]) -> int:
    """Run `command` with `variables` set (pointing it at the proxy); its exit status.

    SIGINT, SIGTERM and SIGHUP are forwarded to it (and noted in `stopped`); streamscope
    waits for it to exit either way, so the proxy outlives every request it makes.
    """
    env = {**os.environ, **variables}
    try:
        child = subprocess.Popen(command, env=env)
    except OSError as e:  # checked before, but the file may have changed since
        say(f"cannot run {command[0]!r}: {e.strerror or e}")
        return 127 if isinstance(e, FileNotFoundError) else 126

    def forward(signum: int, _frame: object) -> None:
        stopped.append(signum)
        if signum == signal.SIGINT and _terminal_delivers_sigint():
            return  # the terminal sent it to the child too; a second one would cut its cleanup
        if child.poll() is None:
            child.send_signal(signum)

    previous = {sig: signal.signal(sig, forward) for sig in STOP_SIGNALS}
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


def command_line() -> list[str]:
    """This process's command line as the user typed it: `streamscope` (however it was
    started: a script, python -m) and every word after it; the writer masks its secrets."""
    return ["streamscope", *sys.argv[1:]]


def open_recording(
    path: str,
    argv: list[str],
    redact: bool,
    redact_json: list[str],
    *,
    pseudonymize_ids: bool = False,
) -> RecordingWriter:
    """The recorder's writer: a failed write is said at once and stops recording only."""

    def lost(e: OSError) -> None:
        say(
            f"{path}: cannot write the recording: {e.strerror or e}; recording stopped, relaying continues"
        )

    try:
        return RecordingWriter(
            path,
            argv=argv,
            redact=redact,
            redact_json=tuple(redact_json),
            pseudonymize_ids=pseudonymize_ids,
            on_error=lost,
            keep_empty=False,
            on_note=say,
        )
    except OSError as e:
        raise StartError(f"{path}: cannot write the recording: {e.strerror or e}") from None


class LiveChild:
    """`--live`: the findings said on stderr as the recording grows, by a child process
    reading the recording's lines as they land (streamscope.analysis.live). The relay
    never waits for it, nor shares an interpreter with it; whatever happens to it, the
    recording goes on."""

    def __init__(self, path: str) -> None:
        try:
            self.proc: subprocess.Popen[bytes] | None = subprocess.Popen(
                [sys.executable, "-m", "streamscope.analysis", "--live", path],
                stdin=subprocess.PIPE,
            )
        except OSError as e:
            say(f"--live: cannot start reading the recording: {e.strerror or e}")
            self.proc = None

    def close(self, timeout: float = 30.0) -> None:
        """The recording is whole: the child says its last findings and ends."""
        proc = self.proc
        if proc is None:
            return
        with contextlib.suppress(OSError):
            proc.stdin.close()  # type: ignore[union-attr]
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def listen(port: int):
    try:
        return bind(port)
    except OSError as e:
        raise StartError(f"cannot listen on 127.0.0.1:{port}: {e.strerror or e}") from None


def record(
    command: list[str],
    upstream_url: str,
    output: str | None,
    port: int,
    env_names: list[str],
    redact: bool,
    redact_json: list[str],
    timeout: float | None,
    sides: dict[str, str | None] | None = None,
    argv: list[str] | None = None,
    *,
    pseudonymize_ids: bool = False,
    live: bool = False,
) -> int:
    """Run `command` behind the proxy; the exit status (StartError when it cannot start).

    `upstream_url`: the default side's upstream; `sides`: the other sides the proxy has,
    by name, each with its upstream URL (None: the origin each request names, for a side
    that has that rule); each side's variables point at it. `argv`: the command line to
    record in the header (the recorder's own options too); by default
    `streamscope record -- COMMAND`. `live`: each finding said as it is seen (LiveChild)."""
    upstream = Upstream.parse(upstream_url)
    others = parse_sides(sides or {})
    problem = cannot_run(command)
    if problem is not None:  # before anything is created: no recording is left behind
        status, message = problem
        say(message)
        return status
    sock = listen(port)  # first: a busy port must not leave an empty recording behind
    try:
        path = output or default_output()
        argv = argv if argv is not None else ["streamscope", "record", "--", *command]
        writer = open_recording(path, argv, redact, redact_json, pseudonymize_ids=pseudonymize_ids)
    except BaseException:
        sock.close()
        raise
    stopped: list[int] = []
    watching = LiveChild(path) if live else None
    try:
        with writer:
            server = ProxyServer(upstream, writer, port, timeout, sock=sock, sides=others)
            server.start()
            announce(server, path, env_names=env_names)
            variables = base_url_variables(server, env_names)
            run, inserted = command, []
            applied = agents.apply(command, base_urls(server))
            try:
                with agents.prepared(applied, os.environ) as own:
                    if applied is not None:  # an agent that reads no base-URL variable
                        run, inserted = applied.command, applied.inserted
                        added = {**applied.env, **own}
                        variables.update(added)
                        if added or inserted:
                            say(
                                f"{applied.recipe.name} is given {given(added, inserted)} ({applied.recipe.why})"
                            )
                    status = run_child(run, variables, stopped)
            finally:
                why = f"streamscope got {signal.Signals(stopped[0]).name}" if stopped else None
                server.stop(why or "the recorded command exited")
    finally:  # its last findings come before the summary
        if watching is not None:
            watching.close()
    summarize(writer, given(variables, inserted))
    if writer.failure is not None and status == 0:
        return 1  # the command succeeded, the recording did not
    return status


def base_urls(server: ProxyServer) -> dict[str, str]:
    """The proxy's base URL of each side, by side name."""
    return {route.side.name: server.base_url_of(route.side.name) or "" for route in server.routes}


def given(variables: dict[str, str], arguments: list[str]) -> str:
    """What a command was given, said: `OPENAI_BASE_URL=..., ...` and `-c '...'`."""
    said = ", ".join(f"{name}={value}" for name, value in variables.items())
    if arguments:
        said = f"{said} and {shlex.join(arguments)}" if said else shlex.join(arguments)
    return said


def parse_sides(urls: dict[str, str | None]) -> dict[str, Upstream | None]:
    """The other sides' upstreams, checked (ValueError naming the bad one's side)."""
    return {
        name: Upstream.parse(url, f"{name} upstream") if url else None for name, url in urls.items()
    }


def describe_sides(server: ProxyServer, env_names: Sequence[str] = ()) -> list[str]:
    """Each side's base URL, every variable `record` sets to it (base_url_variables,
    `env_names` its --env NAMEs) and the upstream it goes to, one a side:
    `OPENAI_BASE_URL=http://127.0.0.1:PORT/v1 (also OPENAI_API_BASE) -> https://api.openai.com/v1`."""
    variables = base_url_variables(server, list(env_names))
    sides = []
    for route in server.routes:
        where = route.side.origin_said if route.regional else _upstream_url(route.upstream)
        url = server.base_url_of(route.side.name)
        first, *also = [name for name, value in variables.items() if value == url]
        more = f" (also {', '.join(also)})" if also else ""
        sides.append(f"{first}={url}{more} -> {where}")
    return sides


def announce(server: ProxyServer, path: str, then: str = "", env_names: Sequence[str] = ()) -> None:
    """The banner: a short line naming the recording, then each side on its own line
    (indented under it: on one line, eight sides ran past any terminal's width)."""
    say(f"recording into {path}{then}")
    for side in describe_sides(server, env_names):
        print(f"  {visible(side)}", file=sys.stderr, flush=True)


def _upstream_url(upstream: Upstream) -> str:
    return upstream.origin + upstream.prefix


def summarize(writer: RecordingWriter, given: str | None = None) -> None:
    """The short summary printed when the recorder stops (`given`: what `record` gave
    its command, said when the command made no request)."""
    from collections import Counter

    from ..analysis import analyze
    from ..core.contract import UNCHECKED, UNREAD
    from ..recording.format import RecordingError

    path = writer.path

    def tell(line: str) -> None:  # an error read back may echo a key the writer held
        say(writer.shown(line))

    if writer.removed:
        if given is None:  # `proxy`: no command
            say(f"no exchange was recorded, so no recording was kept at {path}")
        else:
            say(
                f"the command made no request through the proxy, so no recording was kept "
                f'at {path} (it was given {given}); see "Recording coding agents" in streamscope\'s '
                "docs"
            )
        return
    if writer.failure is not None:
        say(f"the recording is incomplete: it stopped at a failed write ({writer.failure})")
    if not os.path.isfile(path):
        return  # e.g. /dev/full: nothing to read back
    try:
        analysis = analyze(path)
    except RecordingError as e:
        tell(f"the recording could not be read back: {e}")
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
    contract = Counter(
        f.kind for f in analysis.contract if f.severity != "info" and f.kind != UNREAD
    )
    # streams whose calls pairing could not check: said, and no break
    unchecked = Counter(f.kind for f in analysis.contract if f.kind in UNCHECKED)
    # the contract held, with a note (a client's own ids where the model sent none)
    noted = Counter(
        f.kind for f in analysis.contract if f.severity == "info" and f.kind not in UNCHECKED
    )
    # requests that could not be read: the contract is not checked against them, not broken
    unread = sum(f.kind == UNREAD for f in analysis.contract)
    tell(
        f"{plural(len(analysis.exchanges), 'exchange')}, {plural(len(analysis.streams), 'stream')} recorded in {path}"
    )
    for severity, kinds in by_severity.items():
        if kinds:
            listed = ", ".join(times(k, n) for k, n in kinds.most_common())
            tell(f"{counted(entries[severity], severity)}: {listed}")
    for f in analysis.failures[:3]:  # whole: the terminal wraps a long reason
        tell(f"exchange {f.exchange} failed: {f.message}")
    if len(analysis.failures) > 3:
        tell(
            f"and {plural(len(analysis.failures) - 3, 'more exchange')} failed (inspect lists them)"
        )
    if contract:
        tell(
            "conversation contract broken: "
            + ", ".join(times(k, n) for k, n in contract.most_common())
        )
    if unchecked:
        tell(
            "conversation contract not checked for some streams: "
            + ", ".join(times(k, n) for k, n in unchecked.most_common())
        )
    if noted and not contract and not unread:
        tell(
            "the conversation contract holds, with notes: "
            + ", ".join(times(k, n) for k, n in noted.most_common())
        )
    if unread:
        tell(
            f"conversation contract not checked against {plural(unread, 'request')} whose "
            f"body cannot be decoded: {times(UNREAD, unread)} (inspect says why)"
        )
    if (
        not any(by_severity.values())
        and not contract
        and not unchecked
        and not noted
        and not unread
        and not analysis.failures
        and analysis.streams
    ):
        tell("no anomalies, the conversation contract holds")
    said = shlex.quote(path)  # a path with a space or a quote, as a shell takes it back
    tell(f"replay it: streamscope replay {said}   (or: streamscope inspect {said})")
