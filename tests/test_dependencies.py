"""streamscope installs beside the user's agent without moving its SDKs: lower bounds only
on what an agent also uses, the verified releases pinned where the differential tests run,
and `inspect` saying when the installed SDK is not the release an emulation reproduces."""

from __future__ import annotations

import importlib.metadata
import os
import sys

import orjson
import pytest
from click.testing import CliRunner
from packaging.requirements import Requirement

from streamscope.cli import main
from streamscope.dialects import versions
from streamscope.dialects.versions import VERIFIED

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = ("openai", "httpx", "httpx2", "anthropic", "google-genai")  # an agent uses them too


def project() -> dict:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)["project"]


def test_what_an_agent_also_uses_has_a_lower_bound_only():
    spec = project()
    extras = spec["optional-dependencies"]
    installed = spec["dependencies"] + [
        r for name, reqs in extras.items() if name != "test" for r in reqs
    ]
    for req in map(Requirement, installed):
        if req.name in SHARED:
            ops = {s.operator for s in req.specifier}
            assert ops == {">="}, f"{req}: only a lower bound, never a pin or an upper bound"


def test_the_test_extra_pins_exactly_the_releases_the_emulations_reproduce():
    pins = {
        req.name: str(req.specifier).removeprefix("==")
        for req in map(Requirement, project()["optional-dependencies"]["test"])
        if req.name in VERIFIED
    }
    assert pins == VERIFIED


def inspect(sample: str, *args: str):
    return CliRunner().invoke(main, ["inspect", os.path.join(ROOT, "recordings", sample), *args])


@pytest.fixture
def installed(monkeypatch):
    """Pretend these releases are installed (None: not installed); the rest as they are."""
    real = versions._version_on_path

    def pretend(told: dict[str, str | None]) -> None:
        def version(name: str) -> str | None:
            return told[name] if name in told else real(name)

        monkeypatch.setattr(versions, "_version_on_path", version)

    return pretend


def test_an_installed_version_is_what_importlib_metadata_says_without_importing_it():
    """versions.installed reads dist-info itself (importlib.metadata is a fifth of the
    start-up): it must answer as importlib.metadata does for every installed
    distribution, by its name however spelt, and None for one not installed."""
    names = {d.metadata["Name"] for d in importlib.metadata.distributions()}
    assert {"openai", "click", "orjson"} <= names
    for name in names:
        assert versions.installed(name) == importlib.metadata.version(name), name
        assert versions.installed(name.upper().replace("-", ".")) == versions.installed(name)
    assert versions.installed("streamscope-no-such-distribution") is None


def test_the_verified_releases_installed_give_no_note(installed):
    installed(dict(VERIFIED))
    out = inspect("openai.jsonl")
    assert out.exit_code == 0, out.output
    assert "verified" not in out.output
    doc = orjson.loads(inspect("openai.jsonl", "--json").output)
    assert "sdk_note" not in doc
    assert doc["sdk_verified"] == {
        "openai-sdk": VERIFIED["openai"],
        "anthropic-sdk": VERIFIED["anthropic"],
        "parts": VERIFIED["google-genai"],
        "ollama-python": VERIFIED["ollama"],
        "strands": VERIFIED["strands-agents"],
    }


def test_another_openai_installed_is_said_in_one_note_and_in_the_json(installed):
    installed({"openai": "2.54.0"})
    lines = inspect("openai.jsonl").output.splitlines()
    notes = [line for line in lines if line.startswith("i ") and "openai" in line]
    assert notes == [
        f"i openai-sdk reproduces openai {VERIFIED['openai']}, the release it was verified "
        "against; openai 2.54.0 is installed and may accumulate otherwise"
    ]
    doc = orjson.loads(inspect("openai.jsonl", "--json").output)
    assert doc["openai_sdk_version"] == "2.54.0"
    assert doc["sdk_note"] == notes[0].removeprefix("i ")


def test_the_note_names_only_the_sdks_of_the_file_s_dialects(installed):
    installed({"openai": "2.54.0", "anthropic": "2.0.0"})
    doc = orjson.loads(inspect("anthropic-tool-use.jsonl", "--json").output)
    assert "anthropic 2.0.0 is installed" in doc["sdk_note"]
    assert "openai" not in doc["sdk_note"]


def test_an_sdk_not_installed_is_no_mismatch(installed):
    installed({"openai": None})
    doc = orjson.loads(inspect("openai.jsonl", "--json").output)
    assert doc["openai_sdk_version"] is None
    assert "sdk_note" not in doc


def test_importing_streamscope_and_its_plugin_imports_no_sdk_nor_http_package():
    """The plugin loads in every pytest run of the user's environment: until a fixture or
    `--streamscope-record` is used it must cost nothing, so it imports nothing heavy."""
    import subprocess

    heavy = ["openai", "anthropic", "google.genai", "httpx", "httpx2", "textual", "rich"]
    heavy += ["uvicorn", "pydantic", "orjson", "click", "brotli"]
    code = (
        "import sys, streamscope, streamscope.pytest_plugin\n"
        f"print(','.join(m for m in {heavy!r} if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


@pytest.mark.slow
def test_the_real_sdk_fallbacks_run_on_the_installed_openai():
    """Where an emulation declines, the installed openai's own classes run: on any
    supported release (CI runs this on the oldest too), not only the verified one."""
    from streamscope.analysis.driver import frame_source
    from streamscope.core.calls import StrategyError
    from streamscope.dialects.chat.appendix_a import FIXTURES
    from streamscope.dialects.chat.oracle import run_real_sdk
    from streamscope.dialects.responses.oracle import run_real_responses

    from .helpers import frames_of

    calls = run_real_sdk(frames_of(FIXTURES["Q0"]))
    assert [(c.id, c.name) for c in calls] == [("call_a", "get_weather")]
    sample = os.path.join(ROOT, "recordings", "responses-done-only.jsonl")
    got = run_real_responses(list(frame_source(sample, 1)))
    # the SDK read the stream (an older release may still fail on it, at a frame)
    assert not isinstance(got, StrategyError) or got.frame >= 1, got


def test_every_pattern_compiles_on_the_oldest_python_supported():
    """requires-python is 3.10, whose `re` has no possessive quantifiers (`*+`) nor atomic
    groups (`(?>...)`): one of them made every command fail there at import."""
    import ast
    import re
    from pathlib import Path

    newer = re.compile(r"(?<!\\)(?:[*+?}]\+)|\(\?>")
    found = []
    for path in sorted(Path(ROOT, "streamscope").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "re"
                and node.args
                and isinstance(node.args[0], ast.Constant)
            ):
                pattern = node.args[0].value
                text = pattern.decode("latin-1") if isinstance(pattern, bytes) else str(pattern)
                # a `+` right after a class's `]` or a group's `)` is an ordinary repeat
                if newer.search(re.sub(r"\[(?:\\.|[^\]\\])*\]", "x", text)):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {text}")
    assert found == []
