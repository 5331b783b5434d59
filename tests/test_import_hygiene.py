"""The core, the recording format and the input layer are pure: no Textual, no network
stack, no SDK. The analysis driver reaches the real openai class only when it must; the
anthropic oracle imports the real anthropic class the same way, only when it runs it."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # the fast run (-m 'not slow') leaves it out

PURE = [
    "streamscope.framing.sse",
    "streamscope.core.frames",
    "streamscope.dialects.chat.engine",
    "streamscope.dialects.chat.strategies",
    "streamscope.dialects.chat.robust",
    "streamscope.core.anomalies",
    "streamscope.core.repair",
    "streamscope.core.contract",
    "streamscope.core.report",
    "streamscope.core.minimal",
    "streamscope.dialects.chat.minimize",
    "streamscope.dialects.chat.sdk_model",
    "streamscope.dialects.anthropic.sdk_model",
    "streamscope.dialects.anthropic.partial_json",
    "streamscope.dialects.anthropic.oracle",
    "streamscope.dialects.anthropic.engine",
    "streamscope.dialects.chat.oracle",
    "streamscope.dialects.responses.sdk_model",
    "streamscope.dialects.responses.oracle",
    "streamscope.dialects",
    "streamscope.core.history",
    "streamscope.recording",
    "streamscope.inputs",
    "streamscope.inputs.sniff",
    "streamscope.inputs.reads",
    "streamscope.inputs.har",
    "streamscope.inputs.cassette",
    "streamscope.inputs.encoding",
    "streamscope.inputs.source",
    "streamscope.analysis.driver",
    "streamscope.text",
    "streamscope.console",
    "streamscope.analysis.text_report",
    "streamscope.framing",
    "streamscope.dialects.ollama.engine",
    "streamscope.dialects.ollama.oracle",
    "streamscope.providers",
]
FORBIDDEN = [
    "textual",
    "httpx",
    "httpx2",
    "uvicorn",
    "openai",
    "rich",
    "anthropic",
    "jiter",
    "pydantic",
    "google.genai",
    "ollama",
    "botocore",
    "boto3",
]


@pytest.mark.parametrize("module", PURE)
def test_pure_module_loads_nothing_heavy(module):
    code = (
        f"import sys, {module}\n"
        f"bad = [m for m in {FORBIDDEN!r} if m in sys.modules]\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"{module} pulled in {out.stdout.strip()}"


# -- the wire's vocabulary lives in the dialects (issue 30) ---------------------------

ROOT = Path(__file__).resolve().parent.parent / "streamscope"
DIALECTS_DIR = ROOT / "dialects"
# The registry's own modules, which every face may import (not one dialect's package).
SHARED = {"streamscope.dialects", "streamscope.dialects.base", "streamscope.dialects.typed"}
# API paths and methods: spelled by the dialect that claims them, nowhere else.
WIRE_WORDS = (
    "/chat/completions",
    "/v1/messages",
    "/responses",
    "streamGenerateContent",
    ":generateContent",
    "/api/chat",
    "/api/generate",
)


def _faces() -> list[Path]:
    return sorted(p for p in ROOT.rglob("*.py") if DIALECTS_DIR not in p.parents)


def _imported(path: Path) -> set[str]:
    """The modules a file imports, absolute (relative imports resolved)."""
    return _imported_as(path, path)


def _imported_as(source: Path, path: Path) -> set[str]:
    """The modules `source` imports, its relative imports read as at `path`."""
    module = "streamscope." + ".".join(path.relative_to(ROOT).with_suffix("").parts)
    parent = module.removesuffix(".__init__") if path.name == "__init__.py" else module
    parent = parent if path.name == "__init__.py" else parent.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = parent.rsplit(".", node.level - 1)[0] if node.level else ""
            module = ".".join(x for x in (base, node.module or "") if x)
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


def _dialect_packages(modules: set[str]) -> set[str]:
    return {
        m
        for m in modules
        if m.startswith("streamscope.dialects.")
        and ".".join(m.split(".")[:3]) not in SHARED
        and (DIALECTS_DIR / m.split(".")[2]).is_dir()
    }


def test_no_face_imports_one_dialects_package():
    bad = {
        str(path.relative_to(ROOT.parent)): sorted(found)
        for path in _faces()
        if (found := _dialect_packages(_imported(path)))
    }
    assert not bad, f"faces ask the registry (streamscope.dialects), not a dialect: {bad}"


def test_no_face_spells_an_api_path_or_method():
    """In code, docstrings and comments alike: help text comes from the records."""
    bad = [
        f"{path.relative_to(ROOT.parent)}:{n}: {line.strip()}"
        for path in _faces()
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if any(word in line for word in WIRE_WORDS)
    ]
    assert not bad, "spelled outside streamscope/dialects/:\n" + "\n".join(bad)


def test_the_hygiene_checks_can_fail(tmp_path):
    """The checks see what they look for: a face that did both would fail them."""
    face = ROOT / "record" / "__init__.py"  # a face's own path, for the relative import
    source = "from ..dialects.gemini import wire\nfrom ..dialects import claimant\n"
    tree_of = tmp_path / "face.py"
    tree_of.write_text(source)
    imported = _imported_as(tree_of, face)
    assert _dialect_packages(imported) == {
        "streamscope.dialects.gemini",
        "streamscope.dialects.gemini.wire",
    }
    assert any(w in 'URL = "/v1/messages"' for w in WIRE_WORDS)


# -- start-up: a command imports what its input needs (issue 38) ------------------------

# Runs the command line in a fresh interpreter, stdout thrown away, then names on stderr
# every module it imported.
_RUN_MAIN = (
    "import os, sys\n"
    "sys.stdout = open(os.devnull, 'w')\n"
    "from streamscope.cli import main\n"
    "try:\n"
    "    main(sys.argv[1:])\n"
    "except SystemExit as e:\n"
    "    assert not e.code, e.code\n"
    "sys.stderr.write(' '.join(sys.modules))\n"
)
RECORDINGS = ROOT.parent / "recordings"
# Each dialect's modules that only reading its own streams needs: engine, strategies, SDK
# emulation (its registry record names them, imported on first use).
_READING = ("engine", "robust", "strategies", "sdk_model", "oracle", "fixture", "session")


def _imported_by(*args: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", _RUN_MAIN, *args], capture_output=True, text=True, check=True
    )
    return set(out.stderr.split())


def _reading_modules(modules: set[str], dialect: str) -> set[str]:
    return {
        m
        for m in modules
        if m.startswith(f"streamscope.dialects.{dialect}.") and m.split(".")[3] in _READING
    }


def test_inspect_of_a_chat_completions_file_imports_no_other_dialects_reading():
    """No other dialect's engine or SDK emulation, no Textual, no pydantic, no Rich (the
    text report writes through streamscope/console.py)."""
    text = _imported_by("inspect", str(RECORDINGS / "openai.jsonl"))
    as_json = _imported_by("inspect", "--json", str(RECORDINGS / "openai.jsonl"))
    for modules in (text, as_json):
        assert "streamscope.dialects.chat.sdk_model" in modules  # the one it runs
        others = [p.name for p in DIALECTS_DIR.iterdir() if p.is_dir() and p.name != "chat"]
        assert len(others) >= 6 and "anthropic" in others
        loaded = {m for d in others for m in _reading_modules(modules, d)}
        # (realtime.robust and anthropic.robust name their events for the registry: robust
        # is allowed where it holds what tells a stream's dialect)
        assert not {m for m in loaded if not m.endswith(".robust")}, sorted(loaded)
        heavy = [m for m in ("textual", "rich", "pydantic", "openai", "httpx") if m in modules]
        assert not heavy, heavy
    assert "streamscope.console" in text  # (so the check sees what the text report loads)
    # the recorder's commands and the replay's key table load when those commands run
    assert not {"streamscope.providers", "streamscope.tui.keys"} & (text | as_json)


def test_version_imports_no_dialect():
    modules = _imported_by("--version")
    assert not [m for m in modules if m.startswith("streamscope.dialects")]
    assert not [m for m in ("textual", "rich", "pydantic") if m in modules]


def test_the_console_scripts_version_imports_not_even_click():
    script = "import sys\nfrom streamscope.__main__ import main\nmain()\nprint(*sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", script, "--version"], capture_output=True, text=True, check=True
    )
    assert out.stdout.startswith("streamscope, version ")
    assert "click" not in out.stdout.split() and "streamscope.cli" not in out.stdout.split()
