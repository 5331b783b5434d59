"""The conformance clients (tests/conformance_clients/) compile, and each refuses a mode
it does not have in one line, exit 2, before it imports its SDK or reaches any network."""

from __future__ import annotations

import ast
import os
import runpy
import sys

import pytest

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "conformance_clients")
CLIENTS = sorted(f for f in os.listdir(HERE) if f.endswith(".py") and f != "__init__.py")
SCRIPTS = [f for f in CLIENTS if f != "common.py"]


@pytest.mark.parametrize("name", CLIENTS)
def test_each_client_compiles(name):
    path = os.path.join(HERE, name)
    with open(path, encoding="utf-8") as f:
        compile(f.read(), path, "exec")


def test_an_unknown_mode_is_one_line_and_exit_2(monkeypatch, capsys):
    monkeypatch.syspath_prepend(HERE)
    sys.modules.pop("common", None)
    common = runpy.run_path(os.path.join(HERE, "common.py"))
    monkeypatch.setattr(sys, "argv", ["openai_chat.py", "nope"])
    with pytest.raises(SystemExit) as exit:
        common["run"]({"helper": lambda: {}, "create": lambda: {}})
    assert exit.value.code == 2
    assert capsys.readouterr().err == (
        "openai_chat.py: unknown mode 'nope' (modes: helper, create)\n"
    )


@pytest.mark.parametrize("name", SCRIPTS)
def test_each_client_runs_its_modes_through_common_run(name):
    """So each refuses an unknown mode as above (run without importing its SDK here)."""
    with open(os.path.join(HERE, name), encoding="utf-8") as f:
        tree = ast.parse(f.read())
    main = tree.body[-1]
    assert isinstance(main, ast.If) and ast.unparse(main.test) == "__name__ == '__main__'"
    (call,) = main.body
    assert ast.unparse(call.value.func) == "common.run"
    (modes,) = call.value.args
    assert isinstance(modes, ast.Dict) and modes.keys, name
