"""Run a client command on cases: a mock provider of the case (`serve`), the recorder in
front of it (`record`'s proxy, with every provider's variables pointing at it), the
command as a child stopped at a time bound; then each case graded (grade.py).

The client's dialect is what it asks: unless `--dialect` names one, the first case of
every dialect is served at once and the client's first request picks (the probe); then
that dialect's other cases run.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import field

from .. import agents
from ..analysis import analyze
from ..core.record import record
from ..playback.library import Library
from ..playback.serve import ServeServer
from ..providers import DEFAULT_SIDE, placeholder_credentials, sides
from ..record.proxy import ProxyServer, Upstream
from ..record.runner import (
    base_url_variables,
    base_urls,
    command_line,
    listen,
    open_recording,
    parse_sides,
)
from ..recording.format import RecordingError
from ..recording.private import private_folders, write_private
from ..recording.redact import redact_text
from ..text import visible
from .cases import Case, served
from .grade import Grade, Ran, grade

STOP_GRACE = 2.0  # seconds a stopped client has to exit before it is killed
POLL = 0.2  # seconds between looks at a running client


class Children:
    """The clients running now, so Ctrl-C stops every one of them."""

    def __init__(self) -> None:
        self.running: set[subprocess.Popen[bytes]] = set()
        # re-entrant: the stop signal's handler takes it in the main thread, which may
        # hold it already (a plain lock would wait on itself for ever)
        self.lock = threading.RLock()
        self.stopped = False

    def stop_all(self) -> None:
        with self.lock:
            self.stopped = True
            for child in list(self.running):
                _stop(child)


def _stop(child: subprocess.Popen[bytes]) -> None:
    """SIGTERM to its process group, then SIGKILL: a client's own children go too."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(child.pid, sig)
        try:
            child.wait(STOP_GRACE)
            return
        except subprocess.TimeoutExpired:
            continue


HEARD = 5000  # stderr lines kept with their times (--loop: each case's last line)


def _tail(stream, lines: deque[str], heard: list[tuple[float, str]] | None) -> None:
    for raw in iter(stream.readline, b""):
        text = raw.decode("utf-8", "replace").rstrip()
        if text:
            lines.append(text)
            if heard is not None and len(heard) < HEARD:
                heard.append((time.monotonic(), text))
    stream.close()


def run_child(
    command: list[str],
    env: dict[str, str],
    stalled: Callable[[float], bool],
    children: Children,
    heard: list[tuple[float, str]] | None = None,
) -> tuple[int | None, float, str]:
    """(exit status or None when it was stopped as stalled, seconds, its last stderr
    line). `stalled` is asked, with the seconds since it began, a few times a second."""
    begun = time.monotonic()
    with children.lock:
        if children.stopped:
            return 130, 0.0, "not run: streamscope was stopped"
    try:
        child = subprocess.Popen(
            command,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,  # its own process group: stopped whole at the bound
        )
    except OSError as e:
        return 127 if isinstance(e, FileNotFoundError) else 126, 0.0, str(e.strerror or e)
    with children.lock:
        children.running.add(child)
    lines: deque[str] = deque(maxlen=20)
    reader = threading.Thread(target=_tail, args=(child.stderr, lines, heard), daemon=True)
    reader.start()
    status: int | None = None
    try:
        while status is None:
            try:
                status = child.wait(POLL)
            except subprocess.TimeoutExpired:
                if stalled(time.monotonic() - begun):
                    _stop(child)
                    break
    finally:
        with children.lock:
            children.running.discard(child)
    reader.join(STOP_GRACE)
    if status is not None and status < 0:
        status = 128 - status
    return status, time.monotonic() - begun, lines[-1] if lines else ""


def run_case(
    files: list[str],
    plan: Plan,
    path: str,
    library: Library | None = None,
    stalled: Callable[[float], bool] | None = None,
    env: dict[str, str] | None = None,
    heard: list[tuple[float, str]] | None = None,
) -> Ran:
    """Serve `files` (or `library`), record the command's traffic to `path` through the
    proxy, run it with `env` added until it exits or is `stalled` (default: past the
    time bound)."""
    if stalled is None:
        stalled = lambda seconds: seconds > plan.timeout  # noqa: E731
    with ServeServer(files, 0, speed=plan.speed, library=library) as server:
        urls = {
            side.name: server.base_url_for(provider)
            for provider, side in sides()
            if side is not DEFAULT_SIDE
        }
        sock = listen(0)
        command = plan.command
        # every side points at the mock: the keys its SDKs want, where the user has none
        keys = placeholder_credentials((side for _, side in sides()), os.environ)
        writer = open_recording(path, command_line(), True, [])
        with writer:
            proxy = ProxyServer(
                Upstream.parse(server.base_url),
                writer,
                0,
                600.0,
                sock=sock,
                sides=parse_sides(urls),
            )
            proxy.start()
            why = "streamscope stopped"
            try:
                variables = base_url_variables(proxy, [])
                run = command
                applied = agents.apply(command, base_urls(proxy))
                with agents.prepared(applied, os.environ) as own:
                    if applied is not None:
                        run = applied.command
                        variables.update({**applied.env, **own})
                    status, seconds, said = run_child(
                        run,
                        {**os.environ, **keys, **(env or {}), **variables},
                        stalled,
                        plan.children,
                        heard,
                    )
                why = "the client exited" if status is not None else "the client hung: stopped"
            finally:
                proxy.stop(why)

        def shown(line: str) -> str:  # masked as the recording is, and safe to print
            return visible(redact_text(writer.shown(line)))

        said = shown(said)
        if heard is not None:
            heard[:] = [(t, shown(line)) for t, line in heard]
    return Ran(status, seconds, said, path, plan.timeout)


def case_file(case: Case, folder: str, work: str) -> str:
    """The recording `serve` plays for `case`, written in `work` (private)."""
    path = os.path.join(work, f"{case.sample_name}.jsonl")
    if not os.path.exists(path):
        write_private(path, served(case, folder))
    return path


def told(path: str) -> str | None:
    """The dialect of a recording's first stream (None: it has none)."""
    try:
        streams = analyze(path).streams
    except RecordingError:
        return None
    return streams[0].dialect if streams else None


@record(slots=True)
class Plan:
    """How the cases are run: the command, where the samples and recordings are."""

    command: list[str]
    folder: str  # the bundled samples
    out: str  # the folder of the cases' recordings
    timeout: float  # a case's time bound, seconds
    speed: float
    jobs: int  # cases run at once
    each: Callable[[Grade], None]  # handed each grade as it is made
    children: Children = field(default_factory=Children)
    work: str = ""  # the served cases' files (a private temporary folder)


def conform(chosen: Sequence[Case], plan: Plan, probe: bool) -> tuple[list[Grade], str | None]:
    """Run and grade every case of `chosen` (`probe`: the first case of each dialect
    first, at once, and then only the dialect the client asked). Returns the grades in
    case order and the dialect the probe found (None: no probe, or the client asked
    none)."""
    private_folders(plan.out)
    plan.work = tempfile.mkdtemp(prefix="streamscope-conformance-")
    try:
        return _conform(chosen, plan, probe)
    finally:
        shutil.rmtree(plan.work, ignore_errors=True)


def _conform(chosen: Sequence[Case], plan: Plan, probe: bool) -> tuple[list[Grade], str | None]:
    number = {id(c): k for k, c in enumerate(chosen, 1)}

    def recording(case: Case) -> str:
        return os.path.join(plan.out, f"{case.sample_name}.jsonl")

    def one(case: Case, files: list[str] | None = None) -> Grade:
        files = files or [case_file(case, plan.folder, plan.work)]
        ran = run_case(files, plan, recording(case))
        got = grade(case, ran)
        if not plan.children.stopped:  # (a case streamscope stopped is not graded aloud)
            plan.each(got)
        return got

    grades: list[Grade] = []
    found: str | None = None
    rest = list(chosen)
    if probe:
        firsts = {}
        for c in chosen:  # a saved body answers any API: only recordings probe
            if c.requested and c.dialect not in firsts:
                firsts[c.dialect] = c
        files = [case_file(c, plan.folder, plan.work) for c in firsts.values()]
        lead = next(iter(firsts.values()))
        path = recording(lead)
        ran = run_case(files, plan, path)
        found = told(path)
        if found is None:
            return [grade(lead, ran)], None
        mine = firsts.get(found)
        if mine is None:
            return [], found
        if mine is not lead:
            os.replace(path, recording(mine))
            ran = Ran(ran.status, ran.seconds, ran.said, recording(mine), ran.timeout)
        first = grade(mine, ran)
        plan.each(first)
        grades.append(first)
        rest = [c for c in chosen if c.dialect == found and c is not mine]
    pool = ThreadPoolExecutor(max(1, plan.jobs))
    try:
        futures = [pool.submit(one, c) for c in rest]
        grades += [f.result() for f in futures]
    except BaseException:  # Ctrl-C: no case starts, the running ones are stopped
        pool.shutdown(wait=False, cancel_futures=True)
        plan.children.stop_all()
        raise
    finally:
        pool.shutdown(wait=True)
    grades.sort(key=lambda g: number[id(g.case)])
    return grades, found


def run_loop(chosen: Sequence[Case], plan: Plan) -> list[Grade]:
    """`--loop`: one client process, every case served in turn (loop.py)."""
    from . import loop

    private_folders(plan.out)
    plan.work = tempfile.mkdtemp(prefix="streamscope-conformance-")
    try:
        files = [case_file(c, plan.folder, plan.work) for c in chosen]
        library = loop.CaseLibrary(files, chosen)
        finished: list[float] = []

        def stalled(_seconds: float) -> bool:
            now = time.monotonic()
            if library.finished.is_set():  # every case answered: it may end in its own time
                finished[:1] = finished[:1] or [now]
                return now - finished[0] > plan.timeout
            return now - library.last > plan.timeout

        whole = os.path.join(plan.work, "whole.jsonl")
        env = {loop.CASES_VARIABLE: str(len(chosen))}
        heard: list[tuple[float, str]] = []
        ran = run_case([], plan, whole, library, stalled, env, heard)
        hung = ran.status is None and not library.finished.is_set()
        paths = loop.cut(whole, chosen, plan.out) if os.path.exists(whole) else {}
        status = None if hung else (ran.status if ran.status is not None else 0)
        out = loop.grades(chosen, paths, library, status, ran.said, plan.timeout, heard)
        for g in out:
            plan.each(g)
        return out
    finally:
        shutil.rmtree(plan.work, ignore_errors=True)
