"""CI holds the habits: it runs exactly the README's test command, and that command runs
lint, format, types and both test runs."""

from __future__ import annotations

import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def read(*path: str) -> str:
    with open(os.path.join(ROOT, *path)) as f:
        return f.read()


def test_ci_runs_exactly_the_readme_test_command():
    readme_command = read("README.md").split("```sh\n", 1)[1].split("```", 1)[0]
    test_command = [line for line in readme_command.splitlines() if "[test" in line]
    ci = [line for line in read(".ci", "run").splitlines() if line and not line.startswith("#")]
    assert len(test_command) == 1
    assert ci[-1] == test_command[0]


def test_the_check_runs_lint_format_types_tests_and_the_oldest_openai():
    steps = [
        line
        for line in read("scripts", "check").splitlines()
        if line and not line.startswith(("#", "set ", "cd "))
    ]
    assert steps == [
        "unset PYTHONDONTWRITEBYTECODE",
        ".venv/bin/ruff check .",
        ".venv/bin/ruff format --check .",
        ".venv/bin/mypy",
        "scripts/install-browser",
        '.venv/bin/pytest -q -n 2 --dist worksteal "$@"',
        "scripts/check-oldest-openai",
        "timeout 180 .venv/bin/python scripts/agent-matrix --install claude codex",
        "timeout 300 .venv/bin/python scripts/phoenix_check.py --install",
    ]
    assert os.access(os.path.join(ROOT, "scripts", "agent-matrix"), os.X_OK)
    assert os.access(os.path.join(ROOT, "scripts", "check"), os.X_OK)
    assert os.access(os.path.join(ROOT, "scripts", "check-oldest-openai"), os.X_OK)


def test_the_docs_build_runs_in_ci():
    """tests/test_docs.py builds the docs with --strict, skipped without the docs extra:
    the command CI runs installs it."""
    assert "[test,docs,ray]" in read(".ci", "run")
    assert "mkdocs" in read("tests", "test_docs.py")


def test_the_type_checker_is_declared_in_the_test_extra():
    assert '"mypy>=' in read("pyproject.toml").split("test = [", 1)[1].split("]", 1)[0]


def test_the_agent_matrix_runs_every_real_agent_test_module():
    """Each tests/test_agent_*.py is some agent's in the matrix, and marks its real-agent
    tests `agent` (the only ones the matrix runs)."""
    import subprocess
    import sys

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
