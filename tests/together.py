"""Exported pytest modules run together: one pytest process for a whole batch (each
interpreter importing an SDK costs seconds), each module collected and run in its own
folder as its user runs it, and each module's outcome read back from the run's JUnit XML,
so a module that fails still fails its own parametrized case, with its own message.

A batch runs once a session: the first case to ask runs it, on whichever xdist worker;
the others (on that worker or the other) read what it wrote."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import traceback
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import orjson

PYTEST = (sys.executable, "-m", "pytest")
# pytest with only its own plugins: an exported module needs none (and this venv's, the
# Textual snapshot one among them, cost a second and more of every interpreter)
NO_PLUGINS = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}

# Loaded into the batch's pytest with `-p`: each module is imported and its tests run with
# its own folder as the working directory, as `cd folder && pytest test_x.py` does. (A
# leading underscore: the restricted launchers let such names import.)
IN_ITS_FOLDER = """
import os
import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    if not isinstance(collector, pytest.Module):
        yield
        return
    old = os.getcwd()
    os.chdir(collector.path.parent)
    try:
        yield
    finally:
        os.chdir(old)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    old = os.getcwd()
    os.chdir(item.path.parent)
    try:
        yield
    finally:
        os.chdir(old)
"""


@dataclass(frozen=True)
class Ran:
    """One module's outcome in its batch."""

    module: Path
    passed: int
    failed: int  # its tests that failed
    errors: int  # errors: in collecting it (an import that fails), in a fixture
    skipped: int
    text: str  # the failures' messages and tracebacks (the run's output if it has none)

    @property
    def green(self) -> bool:
        """Its tests ran, and every one passed."""
        return self.passed > 0 and not (self.failed or self.errors or self.skipped)


def key_name(key: str) -> str:
    """A module name for a batch key: `one-turn` -> `test_one_turn`."""
    return "test_" + "".join(c if c.isalnum() else "_" for c in key)


class Together:
    """Batches of exported modules, each run once in a session (see the module's doc)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def run(
        self,
        name: str,
        writers: Mapping[str, Callable[[Path], None]],
        launcher: Sequence[str] = PYTEST,
        env: Mapping[str, str] = NO_PLUGINS,
    ) -> dict[str, Ran]:
        """Each writer writes its module at the path it is given (`name/key/test_key.py`,
        its folder its own); then one `launcher` pytest runs them all. A writer that
        raises is that key's failure, the others run."""
        batch = self.root / name
        with _locked(self.root / f"{name}.lock"):
            done = batch / "outcomes.json"
            if not done.exists():
                shutil.rmtree(batch, ignore_errors=True)  # a run cut short before
                batch.mkdir(parents=True)
                outcomes = _run(batch, writers, launcher, env)
                done.write_bytes(orjson.dumps(outcomes))
            outcomes = orjson.loads(done.read_bytes())
        return {
            key: Ran(batch / key / f"{key_name(key)}.py", **outcome)
            for key, outcome in outcomes.items()
        }


def _run(batch, writers, launcher, env) -> dict[str, dict]:
    outcomes: dict[str, dict] = {}
    modules: dict[str, Path] = {}
    names = [key_name(key) for key in writers]
    assert len(set(names)) == len(names), f"two keys make one module name: {names}"
    for key, write in writers.items():
        module = batch / key / f"{key_name(key)}.py"
        module.parent.mkdir()
        try:
            write(module)
        except Exception:  # noqa: BLE001 (its own case reports it)
            text = "writing the module raised:\n" + traceback.format_exc()
            outcomes[key] = {"passed": 0, "failed": 0, "errors": 1, "skipped": 0, "text": text}
        else:
            modules[key] = module
    if not modules:
        return outcomes
    (batch / "_in_its_folder.py").write_text(IN_ITS_FOLDER)
    report = batch / "report.xml"
    ran = subprocess.run(
        [
            *launcher,
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "_in_its_folder",
            "--continue-on-collection-errors",  # one module that cannot import fails alone
            "--rootdir",
            str(batch),
            "-o",
            "junit_family=xunit1",
            "--junitxml",
            str(report),
            *(str(m) for m in modules.values()),
        ],
        cwd=batch,
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(env),
    )
    output = f"exit {ran.returncode}\n{ran.stdout}{ran.stderr}"
    cases = ET.parse(report).getroot().iter("testcase") if report.exists() else iter(())
    by_file: dict[str, list[ET.Element]] = {}
    for case in cases:
        by_file.setdefault(case.get("file", ""), []).append(case)
    for key, module in modules.items():
        mine = by_file.get(module.relative_to(batch).as_posix(), [])
        said = [e for c in mine for e in c if e.tag in ("failure", "error")]
        text = "\n".join(f"{e.get('message', '')}\n{e.text or ''}" for e in said)
        outcomes[key] = {
            "passed": sum(1 for c in mine if not any(e.tag in SAID for e in c)),
            "failed": sum(1 for e in said if e.tag == "failure"),
            "errors": sum(1 for e in said if e.tag == "error"),
            "skipped": sum(1 for c in mine if c.find("skipped") is not None),
            "text": text or output,
        }
    return outcomes


SAID = ("failure", "error", "skipped")  # a test case that holds none of these passed


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Held by one process at a time (xdist's workers share the folder)."""
    try:
        import fcntl
    except ImportError:  # no flock: each worker runs the batch in its own folder
        yield
        return
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def shared_root(tmp_path_factory) -> Path:
    """A folder every xdist worker of this run sees (the workers' base temps' parent)."""
    base = tmp_path_factory.getbasetemp()
    shared = os.environ.get("PYTEST_XDIST_WORKER") and sys.platform != "win32"  # (flock)
    root = (base.parent if shared else base) / "together"
    root.mkdir(exist_ok=True)
    return root
