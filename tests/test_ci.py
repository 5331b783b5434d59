"""CI holds the habits: it runs exactly the README's test command, and that command runs
lint, format, types and both test runs."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def read(*path: str) -> str:
    with open(os.path.join(ROOT, *path)) as f:
        return f.read()


def test_ci_runs_exactly_the_readme_test_command():
    readme_command = read("README.md").split("```sh\n", 1)[1].split("```", 1)[0]
    test_command = [line for line in readme_command.splitlines() if "scripts/check" in line]
    ci = [line for line in read(".ci", "run").splitlines() if line and not line.startswith("#")]
    assert len(test_command) == 1
    assert ci[-1] == test_command[0]


def check_steps() -> list[str]:
    return [
        line
        for line in read("scripts", "check").splitlines()
        if line and not line.startswith(("#", "set ", "cd "))
    ]


PYTEST = '.venv/bin/pytest -q -n 4 --dist worksteal "$@"'
OLDEST = "alongside oldest-openai scripts/check-oldest-openai"
AGENTS = "alongside agents timeout 300 .venv/bin/python scripts/agent-matrix --install claude codex"
PHOENIX = "alongside phoenix timeout 300 .venv/bin/python scripts/phoenix_check.py --install"
MAIN_INSTALL = "    scripts/pip-install .venv/bin/python -e '.[test,docs,ray]'"


def test_the_check_runs_lint_format_types_tests_and_the_oldest_openai():
    assert check_steps() == [
        "install=",
        'if [ "${1:-}" = --install ]; then',
        "    install=1",
        "    shift",
        "fi",
        "unset PYTHONDONTWRITEBYTECODE",
        'if [ -n "$install" ]; then',
        "    .venv/bin/pip install -q uv",
        "fi",
        ". scripts/background.sh",
        OLDEST,
        "background browser scripts/install-browser",
        'if [ -n "$install" ]; then',
        MAIN_INSTALL,
        "fi",
        PHOENIX,
        AGENTS,
        ".venv/bin/ruff check .",
        ".venv/bin/ruff format --check .",
        "beside collected .venv/bin/pytest -q --collect-only",
        ".venv/bin/mypy",
        "finished collected",
        "awaited browser",
        PYTEST,
        "awaited agents",
        "awaited phoenix",
        "awaited oldest-openai",
    ]
    assert os.access(os.path.join(ROOT, "scripts", "agent-matrix"), os.X_OK)
    assert os.access(os.path.join(ROOT, "scripts", "check"), os.X_OK)
    assert os.access(os.path.join(ROOT, "scripts", "check-oldest-openai"), os.X_OK)
    assert os.access(os.path.join(ROOT, "scripts", "pip-install"), os.X_OK)


def test_every_check_ci_ran_before_the_installs_moved_still_runs():
    """What scripts/check ran one after another until its installs went to the background
    (2026-12-03), and the steps that do each now, in their order: an install started in
    the background, awaited right before its check starts; a check run beside the others
    awaited before the script ends, Phoenix's and the agents' started once .venv is
    installed."""
    now = {
        ".venv/bin/ruff check .": [".venv/bin/ruff check ."],
        ".venv/bin/ruff format --check .": [".venv/bin/ruff format --check ."],
        ".venv/bin/mypy": [".venv/bin/mypy"],
        "scripts/install-browser": [
            "background browser scripts/install-browser",
            "awaited browser",
            PYTEST,
        ],
        PYTEST: [PYTEST],
        "scripts/check-oldest-openai": [OLDEST, "awaited oldest-openai"],
        "timeout 180 .venv/bin/python scripts/agent-matrix --install claude codex": [
            MAIN_INSTALL,
            AGENTS,
            "awaited agents",
        ],
        "timeout 300 .venv/bin/python scripts/phoenix_check.py --install": [
            MAIN_INSTALL,
            PHOENIX,
            "awaited phoenix",
        ],
    }
    steps = check_steps()
    for before, after in now.items():
        at = [steps.index(s) for s in after if s in steps]
        assert len(at) == len(after) and at == sorted(at), f"{before!r}: {after} in order"
        if len(after) > 2 and after[1].startswith("awaited "):
            assert at[2] == at[1] + 1, before  # nothing between the install and its check
    started = [s.split()[1] for s in steps if s.startswith(("background ", "alongside "))]
    assert sorted(started) == sorted(s.split()[1] for s in steps if s.startswith("awaited "))
    assert steps[-2:] == ["awaited phoenix", "awaited oldest-openai"]


def test_a_check_run_alongside_is_at_full_priority_and_an_install_in_the_background_niced():
    script = f". {os.path.join(ROOT, 'scripts', 'background.sh')}\n"
    script += "alongside now nice\nbackground later nice\nawaited now\nawaited later\n"
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    niced = min(os.nice(0) + 10, 19)  # a run already niced: the kernel stops at 19
    assert done.stdout.splitlines()[0::2] == [str(os.nice(0)), str(niced)]


def test_a_background_install_that_fails_fails_the_check_with_its_output_and_none_is_left(
    tmp_path,
):
    """scripts/background.sh: a failed job fails the run where it is awaited, its log
    shown; one still running when the run exits is stopped, its children too."""
    script = (
        "set -euo pipefail\n"
        f". {os.path.join(ROOT, 'scripts', 'background.sh')}\n"
        "background ok echo fine\n"
        "background bad sh -c 'echo what pip said; exit 3'\n"
        'background long sh -c \'sleep 300 & echo $! > "$1"; wait\' sh "$1"\n'
        'while [ ! -s "$1" ]; do sleep 0.05; done\n'
        "awaited ok\n"
        "awaited bad\n"
        "echo not reached\n"
    )
    pidfile = tmp_path / "pid"
    done = subprocess.run(
        ["bash", "-c", script, "check", str(pidfile)], capture_output=True, text=True, timeout=60
    )
    child = int(pidfile.read_text())
    assert done.returncode == 3, done
    assert "fine" in done.stdout and "what pip said" in done.stdout
    assert "not reached" not in done.stdout
    assert "bad (in the background) failed, exit 3" in done.stderr
    # stopped: gone, or a zombie that init reaps later; on a loaded machine it may take a
    # moment to die after its signal (once seen in state R just after the run)
    deadline = time.monotonic() + 5
    while True:
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        with open(f"/proc/{child}/stat") as f:
            if f.read().split(") ", 1)[1].startswith("Z"):
                break
        assert time.monotonic() < deadline, "the background job's child runs on"
        time.sleep(0.05)


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    with open(f"/proc/{pid}/stat") as f:
        return f.read().split(") ", 1)[1].startswith("Z")


def test_work_beside_a_step_is_awaited_quietly_and_stopped_with_the_check(tmp_path):
    """`beside`: its output dropped and its failure left to the step it prepares; one
    still running when the check exits is stopped, its children too."""
    background = os.path.join(ROOT, "scripts", "background.sh")
    script = (
        f"set -euo pipefail\n. {background}\n"
        "beside warm sh -c 'echo chatter; exit 2'\nfinished warm\necho after\n"
        'beside long sh -c \'sleep 300 & echo $! > "$1"; wait\' sh "$1"\n'
        'while [ ! -s "$1" ]; do sleep 0.05; done\nexit 5\n'
    )
    pidfile = tmp_path / "pid"
    done = subprocess.run(
        ["bash", "-c", script, "check", str(pidfile)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 5 and done.stdout == "after\n", done
    deadline = time.monotonic() + 5
    while not _gone(int(pidfile.read_text())):
        assert time.monotonic() < deadline, "the job beside the step runs on"
        time.sleep(0.05)


@pytest.mark.slow  # a second of waiting: the fast run leaves it out
def test_a_background_install_not_done_in_its_time_once_awaited_fails_the_check():
    script = f". {os.path.join(ROOT, 'scripts', 'background.sh')}\n"
    script += "background slow sleep 300\nawaited slow 1\necho not reached\n"
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "not reached" not in done.stdout
    assert "slow (in the background) not done 1 s after it was needed" in done.stderr


def _fake_installers(tmp_path, uv_status: int):
    """A copy of scripts/pip-install beside a .venv whose uv exits `uv_status`, and a
    Python that only logs how it was called; each tool logs its arguments."""
    scripts, bin_ = tmp_path / "scripts", tmp_path / ".venv" / "bin"
    scripts.mkdir()
    bin_.mkdir(parents=True)
    helper = scripts / "pip-install"
    helper.write_text(read("scripts", "pip-install"))
    for tool, status in (("uv", uv_status), ("python", 0)):
        path = bin_ / tool
        path.write_text(f'#!/bin/sh\necho "{tool} $*" >> "{tmp_path}/calls"\nexit {status}\n')
        path.chmod(0o755)
    helper.chmod(0o755)
    return helper, str(bin_ / "python")


def test_installs_go_through_uv_where_the_checkout_has_it(tmp_path):
    helper, python = _fake_installers(tmp_path, uv_status=0)
    done = subprocess.run([str(helper), python, "arize-phoenix"], timeout=30)
    assert done.returncode == 0
    calls = (tmp_path / "calls").read_text().splitlines()
    assert calls == [f"uv pip install --quiet --python {python} arize-phoenix"]


def test_an_install_uv_cannot_do_is_done_by_pip_and_said(tmp_path):
    helper, python = _fake_installers(tmp_path, uv_status=2)
    done = subprocess.run(
        [str(helper), python, "-e", "."], capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0
    assert "uv could not install -e .; pip instead" in done.stderr
    calls = (tmp_path / "calls").read_text().splitlines()
    assert calls == [
        f"uv pip install --quiet --python {python} -e .",
        "python -m pip install -q --no-compile -e .",
    ]


def test_the_docs_build_runs_in_ci():
    """tests/test_docs.py builds the docs with --strict, skipped without the docs extra:
    the command CI runs installs it (`scripts/check --install`)."""
    assert read(".ci", "run").rstrip().endswith("scripts/check --install")
    assert "scripts/pip-install .venv/bin/python -e '.[test,docs,ray]'" in read("scripts", "check")
    assert "mkdocs" in read("tests", "test_docs.py")


def test_the_type_checker_is_declared_in_the_test_extra():
    assert '"mypy>=' in read("pyproject.toml").split("test = [", 1)[1].split("]", 1)[0]


def test_the_agent_matrix_runs_every_real_agent_test_module():
    """Each tests/test_agent_*.py is some agent's in the matrix, and marks its real-agent
    tests `agent` (the only ones the matrix runs)."""
    listed = subprocess.run(
        [sys.executable, os.path.join(ROOT, "scripts", "agent-matrix"), "--list"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    modules = sorted(
        f"tests/{name}"
        for name in os.listdir(os.path.join(ROOT, "tests"))
        if name.startswith("test_agent_") and name.endswith(".py")
    )
    assert modules and all(m in listed for m in modules), listed
    assert all("pytest.mark.agent" in read(*m.split("/")) for m in modules)
