"""The Gemini CLI under `streamscope record`, against a local fake of the Gemini API
(tests/fakes/gemini_api.py).

- The recipe (streamscope/agents.py): gemini reads GOOGLE_GEMINI_BASE_URL, which every
  recorded command gets, but with it set and no auth type selected in its settings its
  headless mode refuses to run ("Invalid auth method selected."): `record` then gives it
  a GEMINI_CLI_HOME of the run's own, the user's entries linked, settings.json a copy
  that selects the Gemini API key, removed after the run.
- The real Gemini CLI (`gemini` on PATH, or $STREAMSCOPE_GEMINI_CLI), when installed:
  its tool loop (the model's `run_shell_command` call, its result sent back, the answer)
  runs under `record` with no other step, and inspect reads every call, its result and
  the contract with no finding that did not happen.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from streamscope import agents
from streamscope.recording import RecordingWriter

from .fakes import gemini_api
from .fakes.gemini_api import ANSWER, COMMAND, TOOL, FakeGeminiApi

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "streamscope"]
PROXY = "http://127.0.0.1:4242/gemini"
API_KEY_TYPE = {"security": {"auth": {"selectedType": "gemini-api-key"}}}


# -- the recipe --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        ["gemini", "-p", "hi"],
        ["/usr/local/bin/gemini", "--yolo"],
        ["npx", "-y", "@google/gemini-cli@0.61.0", "-p", "hi"],
    ],
)
def test_the_gemini_recipe_adds_no_argument(command):
    applied = agents.apply(command, {"gemini": PROXY, "openai": "http://x/v1"})
    assert applied is not None and applied.recipe.name == "gemini"
    assert applied.command == command and applied.inserted == [] and applied.env == {}


def _home(tmp_path: Path, settings: object | None = None, text: str | None = None) -> Path:
    home = tmp_path / "home"
    (home / ".gemini" / "tmp").mkdir(parents=True)
    (home / ".gemini" / "oauth_creds.json").write_text("{}")
    if settings is not None or text is not None:
        body = text if text is not None else json.dumps(settings)
        (home / ".gemini" / "settings.json").write_text(body)
    return home


def _given(tmp_path: Path, environ: dict[str, str]) -> tuple[dict[str, str], Path]:
    work = tmp_path / "work"
    work.mkdir()
    return agents.gemini_home(environ, work), work


def test_settings_that_select_no_auth_type_get_a_home_of_the_runs_own(tmp_path):
    mine = {"ui": {"theme": "GitHub"}, "security": {"folderTrust": {"enabled": True}}}
    home = _home(tmp_path, mine)
    before = (home / ".gemini" / "settings.json").read_bytes()
    given, work = _given(tmp_path, {"HOME": str(home), "GEMINI_API_KEY": "k"})
    assert given == {"GEMINI_CLI_HOME": str(work)}
    settings = json.loads((work / ".gemini" / "settings.json").read_text())
    # the user's settings, with the auth type gemini would have picked without the variable
    assert settings == {
        "ui": {"theme": "GitHub"},
        "security": {"folderTrust": {"enabled": True}, "auth": {"selectedType": "gemini-api-key"}},
    }
    # every other entry the user's own, linked: what gemini writes lands where it always does
    assert (work / ".gemini" / "tmp").resolve() == (home / ".gemini" / "tmp").resolve()
    assert (work / ".gemini" / "oauth_creds.json").is_symlink()
    assert (home / ".gemini" / "settings.json").read_bytes() == before


def test_no_settings_at_all_and_no_gemini_dir(tmp_path):
    home = tmp_path / "bare"
    home.mkdir()
    given, work = _given(tmp_path, {"HOME": str(home)})
    assert json.loads((work / ".gemini" / "settings.json").read_text()) == API_KEY_TYPE
    assert given == {"GEMINI_CLI_HOME": str(work)}
    assert list(home.iterdir()) == []  # nothing made in the user's home


def test_gemini_cli_home_is_where_the_users_settings_are(tmp_path):
    home = _home(tmp_path, API_KEY_TYPE)
    assert _given(tmp_path, {"HOME": "/nonexistent", "GEMINI_CLI_HOME": str(home)})[0] == {}


def test_compute_adc_keeps_its_type(tmp_path):
    home = _home(tmp_path)
    _, work = _given(tmp_path, {"HOME": str(home), "CLOUD_SHELL": "true"})
    settings = json.loads((work / ".gemini" / "settings.json").read_text())
    assert settings["security"]["auth"]["selectedType"] == "compute-default-credentials"


@pytest.mark.parametrize(
    ("settings", "text", "environ"),
    [
        ({"security": {"auth": {"selectedType": "oauth-personal"}}}, None, {}),
        (API_KEY_TYPE, None, {}),
        (None, None, {"GOOGLE_GENAI_USE_VERTEXAI": "true"}),  # picked before the base URL
        (None, None, {"GOOGLE_GENAI_USE_GCA": "true"}),
        (None, '{"ui": {} // gemini reads comments, this does not\n}', {}),  # left as it is
        (None, "[1, 2]", {}),
    ],
)
def test_a_run_that_needs_nothing_is_given_nothing(tmp_path, settings, text, environ):
    home = _home(tmp_path, settings, text)
    given, work = _given(tmp_path, {"HOME": str(home), **environ})
    assert given == {} and list(work.iterdir()) == []


def test_the_runs_folder_goes_and_the_users_files_stay(tmp_path, monkeypatch):
    home = _home(tmp_path, {"ui": {}})
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    applied = agents.apply(["gemini", "-p", "hi"], {"gemini": PROXY})
    with agents.prepared(applied, {"HOME": str(home)}) as given:
        work = Path(given["GEMINI_CLI_HOME"])
        assert work.parent == tmp_path and (work.stat().st_mode & 0o077) == 0
    assert not work.exists()
    assert sorted(p.name for p in (home / ".gemini").iterdir()) == [
        "oauth_creds.json",
        "settings.json",
        "tmp",
    ]


def test_a_folder_that_cannot_be_made_is_said_and_the_run_goes_on(capsys):
    applied = agents.apply(["gemini"], {"gemini": PROXY})
    assert applied is not None
    broken = dataclasses.replace(
        applied, recipe=dataclasses.replace(applied.recipe, prepare=_fails)
    )
    with agents.prepared(broken, {}) as given:
        assert given == {}
    said = capsys.readouterr().err
    assert said.startswith("streamscope: cannot make gemini's config dir in ")
    assert said.endswith(": No space left on device\n")


def _fails(environ: object, work: Path) -> dict[str, str]:
    raise OSError(28, "No space left on device")


def _fake_gemini(folder: Path) -> None:
    """A `gemini` program that makes no request: it writes down what it was given, and the
    settings it would read."""
    folder.mkdir()
    program = folder / "gemini"
    program.write_text(
        f"#!{sys.executable}\n"
        "import json, os, sys\n"
        "home = os.environ.get('GEMINI_CLI_HOME') or os.environ['HOME']\n"
        "path = os.path.join(home, '.gemini', 'settings.json')\n"
        "settings = json.load(open(path)) if os.path.exists(path) else None\n"
        "json.dump({'argv': sys.argv[1:], 'env': dict(os.environ), 'settings': settings},"
        " open(os.environ['SAID'], 'w'))\n"
    )
    program.chmod(0o755)


@pytest.mark.slow
@pytest.mark.parametrize("selected", [False, True])
def test_record_gives_gemini_a_home_only_where_its_settings_select_no_type(tmp_path, selected):
    bin_dir, said, temp = tmp_path / "bin", tmp_path / "said.json", tmp_path / "tmp"
    _fake_gemini(bin_dir)
    temp.mkdir()
    mine = {"ui": {"theme": "GitHub"}, **(API_KEY_TYPE if selected else {})}
    home = _home(tmp_path, mine)
    before = sorted(p.name for p in (home / ".gemini").iterdir())
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GEMINI_", "GOOGLE_"))}
    env |= {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "HOME": str(home)}
    env |= {"SAID": str(said), "TMPDIR": str(temp), "GEMINI_API_KEY": "k"}
    out = tmp_path / "r.jsonl"
    done = subprocess.run(
        [*CLI, "record", "-o", str(out), "--", "gemini", "-p", "hi"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    given = json.loads(said.read_text())
    assert given["argv"] == ["-p", "hi"]
    assert given["env"]["GOOGLE_GEMINI_BASE_URL"].endswith("/gemini")
    assert given["settings"] == {**mine, "security": API_KEY_TYPE["security"]}
    told = [line for line in done.stderr.splitlines() if "gemini is given" in line]
    if selected:  # its own choice stands: the variables alone
        assert "GEMINI_CLI_HOME" not in given["env"] and told == []
    else:
        work, recipe = given["env"]["GEMINI_CLI_HOME"], agents.recipe_for(["gemini"])
        assert recipe is not None
        assert told == [f"streamscope: gemini is given GEMINI_CLI_HOME={work} ({recipe.why})"]
        assert Path(work).parent == temp and not Path(work).exists()  # gone after the run
        assert f"GEMINI_CLI_HOME={work}" in done.stderr.splitlines()[-1]  # no request made
    assert sorted(p.name for p in (home / ".gemini").iterdir()) == before
    assert json.loads((home / ".gemini" / "settings.json").read_text()) == mine


# -- what record says of a client that fills in the ids -----------------------------------


@pytest.mark.slow  # (the analysis, in process: about 0.6 s)
def test_record_says_the_contract_holds_where_the_client_filled_in_the_ids(tmp_path, capsys):
    """A functionCall with no id, which the client sends back and answers under an id of
    its own (the Gemini CLI does): the contract held, with a note; no 'not checked'."""
    from streamscope.record.runner import summarize

    url = "https://generativelanguage.googleapis.com/v1beta/models/m:streamGenerateContent?alt=sse"
    question = {"role": "user", "parts": [{"text": "run echo hello"}]}
    call = {"name": TOOL, "args": {"command": COMMAND}}
    sent = {"functionCall": {**call, "id": "run_shell_command_1_0"}}
    result = {"name": TOOL, "id": "run_shell_command_1_0", "response": {"output": "hello"}}
    bodies = [
        {"contents": [question]},
        {
            "contents": [
                question,
                {"role": "model", "parts": [{**sent, "thoughtSignature": gemini_api.SIGNATURE}]},
                {"role": "user", "parts": [{"functionResponse": result}]},
            ]
        },
    ]
    fake = FakeGeminiApi()
    path = tmp_path / "filled.jsonl"
    with RecordingWriter(path, argv=["streamscope", "record"]) as w:
        for body in bodies:
            answer = fake.answer(
                gemini_api.Received("POST", url.split("com", 1)[1], {}, json.dumps(body).encode())
            )
            x = w.new_exchange()
            w.request(
                x, "POST", url, [("content-type", "application/json")], json.dumps(body).encode()
            )
            w.response(x, 200, [("content-type", answer.content_type)])
            for piece in answer.pieces:
                w.chunk(x, piece)
            w.end(x, "complete")
    summarize(w)
    said = capsys.readouterr().err
    assert "the conversation contract holds, with notes: tool-call-id-filled" in said
    assert "not checked" not in said and "broken" not in said


# -- the real Gemini CLI -----------------------------------------------------------------


def _gemini() -> str | None:
    given = os.environ.get("STREAMSCOPE_GEMINI_CLI")
    return given if given and os.access(given, os.X_OK) else shutil.which("gemini")


GEMINI = _gemini()
needs_gemini = pytest.mark.skipif(
    GEMINI is None,
    reason="the Gemini CLI is not installed (npm install @google/gemini-cli; see docs)",
)
PROMPT = "run echo hello"
# Its settings in the test's own HOME: no auth type (record's recipe is what is tried),
# no usage statistics (gemini would send them to play.googleapis.com).
SETTINGS = {"privacy": {"usageStatisticsEnabled": False}}


@pytest.fixture(scope="module")
def gemini_run(tmp_path_factory) -> dict[str, Any]:
    """gemini -p run once under `record`, against the fake, in a HOME of the test's own."""
    assert GEMINI is not None
    base = tmp_path_factory.mktemp("gemini")
    home, work, temp = base / "home", base / "home" / "project", base / "tmp"
    (home / ".gemini").mkdir(parents=True)
    work.mkdir()
    temp.mkdir()
    settings = home / ".gemini" / "settings.json"
    settings.write_text(json.dumps(SETTINGS))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GEMINI_", "GOOGLE_"))}
    env |= {"HOME": str(home), "TMPDIR": str(temp), "GEMINI_API_KEY": "fake-gemini-test-key"}
    env["PATH"] = f"{Path(GEMINI).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(ROOT)
    out = base / "gemini.jsonl"
    with FakeGeminiApi() as fake:
        command = [*CLI, "record", "--gemini-upstream", fake.url, "-o", str(out), "--force"]
        command += ["--", "gemini", "-p", PROMPT, "--yolo", "--skip-trust"]
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
            cwd=work,
            stdin=subprocess.DEVNULL,
        )
    inspected = subprocess.run(
        [*CLI, "inspect", "--json", str(out)], capture_output=True, text=True, timeout=60
    )
    return {
        "done": done,
        "received": list(fake.received),
        "report": json.loads(inspected.stdout) if inspected.returncode == 0 else None,
        "inspected": inspected,
        "settings": settings.read_text(),
        "temp": temp,
    }


@pytest.mark.agent
@pytest.mark.slow
@needs_gemini
def test_gemini_runs_its_tool_loop_under_record_with_no_other_step(gemini_run):
    done = gemini_run["done"]
    assert done.returncode == 0, done.stderr[-3000:]
    assert "".join(ANSWER) in done.stdout
    (line,) = [x for x in done.stderr.splitlines() if "gemini is given" in x]
    home = re.search(r"GEMINI_CLI_HOME=(\S+)", line)
    assert home is not None and not Path(home[1]).exists()  # removed after the run
    assert Path(home[1]).parent == gemini_run["temp"]
    assert gemini_run["settings"] == json.dumps(SETTINGS)  # the user's own, unchanged
    streams = [r for r in gemini_run["received"] if ":streamGenerateContent" in r.path]
    assert len(streams) == 2 and all(r.path.endswith("?alt=sse") for r in streams)
    # the tool ran, and its output went back in the next request
    last = streams[1].json()["contents"][-1]["parts"]
    (response,) = [p["functionResponse"] for p in last if "functionResponse" in p]
    assert response["name"] == TOOL and "hello" in json.dumps(response["response"])


@pytest.mark.agent
@pytest.mark.slow
@needs_gemini
def test_inspect_reads_gemini_s_call_its_result_and_the_contract(gemini_run):
    assert gemini_run["report"] is not None, gemini_run["inspected"].stderr
    report = gemini_run["report"]
    streams = [s for s in report["streams"] if s.get("dialect") == "gemini"]
    assert len(streams) == 2
    (call,) = streams[0]["tool_calls"]
    assert call["name"] == TOOL and json.loads(call["arguments"]) == {"command": COMMAND}
    assert call["thought_signature"] == gemini_api.SIGNATURE
    assert "hello" in json.dumps((call.get("result") or {}).get("content"))  # what it sent back
    assert streams[1]["tool_calls"] == []
    # no error or warning, on a conversation where nothing went wrong
    bad = [a for s in report["streams"] for a in s["anomalies"] if a["severity"] != "info"]
    assert bad == []
    # the CLI answers the id-less call under an id of its own, on both sides: noted, held
    assert [f["kind"] for f in report["contract"]] == ["tool-call-id-filled"]
    assert "the conversation contract holds, with notes" in gemini_run["done"].stderr
