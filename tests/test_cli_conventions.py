"""What every command shares: whole summaries, help on every option, --force, completion."""

from __future__ import annotations

import os
import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from streamscope.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OPENAI = os.path.join(ROOT, "recordings", "openai.jsonl")
SCRIPT = os.path.join(os.path.dirname(sys.executable), "streamscope")
_CTX = click.Context(main)
# every command, those defined in a module of their own (Commands.LAZY) loaded
COMMANDS = {name: main.get_command(_CTX, name) for name in main.list_commands(_CTX)}


def test_the_top_help_shows_every_summary_whole():
    out = CliRunner().invoke(main, ["--help"], terminal_width=80).output
    listed = " ".join(out.split("Commands:")[1].split())
    assert "..." not in listed
    unwrapped = "".join(listed.split())  # (a line may break after a hyphen)
    for name, command in COMMANDS.items():
        first = command.help.split("\n\n")[0]
        assert f"{name}{''.join(first.split())}" in unwrapped


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_option_says_what_it_does(name):
    for param in COMMANDS[name].params:
        if isinstance(param, click.Option):
            assert param.help, f"{name} {param.opts[0]} has no help text"


def test_export_overwrites_only_with_force(tmp_path):
    out = tmp_path / "x.sse"
    out.write_text("keep")
    run = CliRunner().invoke
    refused = run(main, ["export", OPENAI, "-o", str(out)])
    assert refused.exit_code == 2 and "without --force" in refused.output
    assert out.read_text() == "keep"
    done = run(main, ["export", OPENAI, "-o", str(out), "--force"])
    assert done.exit_code == 0 and f"wrote {out}" in done.output
    assert out.read_bytes().startswith(b"data: ")


@pytest.mark.parametrize(
    "args",
    [
        ["export", OPENAI],
        ["export", "--format", "md", OPENAI],
        ["export", "--format", "otlp", OPENAI],
        ["record", "--upstream", "http://127.0.0.1:9/v1"],
    ],
    ids=["fixture", "report", "otlp", "record"],
)
@pytest.mark.parametrize("force", [False, True], ids=["", "force"])
def test_an_output_that_is_a_directory_is_said_to_be_one(tmp_path, args, force):
    # it was "already exists ... without --force", then with --force "cannot write"
    tail = ["--", sys.executable, "-c", "pass"] if args[0] == "record" else []
    extra = ["--force"] if force else []
    done = CliRunner().invoke(main, [*args, "-o", str(tmp_path), *extra, *tail])
    assert done.exit_code == 2, done.output
    assert (
        done.output.strip()
        == f"streamscope: {tmp_path}: is a directory; -o names the file to write"
    )
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_record_replaces_a_recording_only_with_force(tmp_path):
    out = tmp_path / "r.jsonl"
    out.write_text("keep me\n")
    command = [SCRIPT, "record", "--upstream", "http://127.0.0.1:9/v1", "-o", str(out)]
    child = ["--", sys.executable, "-c", "pass"]
    refused = subprocess.run([*command, *child], capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and out.read_text() == "keep me\n"
    done = subprocess.run([*command, "--force", *child], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    # replaced: by nothing, since the command made no request (no empty recording is kept)
    assert not out.exists() and f"no recording was kept at {out}" in done.stderr


@pytest.mark.parametrize("buffered", [True, False])
@pytest.mark.parametrize(
    "args",
    [
        ["inspect", OPENAI],
        ["inspect", "--json", "--strict", OPENAI],
        ["scan", OPENAI],
        ["export", "--format", "sse", OPENAI],
        ["diff", OPENAI, os.path.join(ROOT, "recordings", "vllm.jsonl")],
        ["inspect", "--help"],
        ["--help"],
        ["-V"],
    ],
)
def test_a_reader_that_leaves_ends_the_command_quietly(args, buffered):
    """`streamscope inspect FILE | head -1`: the pipe closes under the command, which ends
    as scan's always did, status 0, no message (inspect exited 1, -V with a traceback)."""
    read, write = os.pipe()
    os.close(read)  # the reader has gone before the first write
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if not buffered:
        env["PYTHONUNBUFFERED"] = "1"
    try:
        done = subprocess.run(
            [sys.executable, "-m", "streamscope", *args],
            stdout=write,
            stderr=subprocess.PIPE,
            env=env,
            timeout=60,
        )
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (0, b"")


@pytest.mark.parametrize(
    "args, status",
    [
        (["inspect", OPENAI], 0),
        (["inspect", "--json", OPENAI], 0),
        # its own status: a warning under --strict still fails it
        (["inspect", "--strict", os.path.join(ROOT, "recordings", "alibaba-empty-id.jsonl")], 1),
        (["export", "--format", "sse", OPENAI], 0),
        (["scan", OPENAI], 0),
        (["-V"], 0),
    ],
)
def test_a_closed_standard_output_is_as_dev_null(args, status):
    """`streamscope inspect FILE >&-`: the output is discarded as by `>/dev/null`, the
    command's own exit status, no message (inspect and export printed a traceback)."""
    done = subprocess.run(
        ["sh", "-c", 'exec "$@" >&-', "sh", sys.executable, "-m", "streamscope", *args],
        capture_output=True,
        timeout=60,
    )
    assert (done.returncode, done.stderr) == (status, b"")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full here")
@pytest.mark.parametrize("buffered", [True, False])
@pytest.mark.parametrize(
    "args",
    [
        ["inspect", OPENAI],
        ["inspect", "--json", OPENAI],
        ["export", OPENAI],
        ["export", "--format", "md", OPENAI],
        ["scan", "-j1", OPENAI],
        ["diff", OPENAI, os.path.join(ROOT, "recordings", "vllm.jsonl")],
        ["inspect", "--help"],
        ["--help"],
        ["-V"],
    ],
)
def test_a_standard_output_that_cannot_be_written_is_one_line(args, buffered):
    """`streamscope inspect FILE > /dev/full`: one line and status 2, as for `-o
    /dev/full` (a traceback and status 1); with standard error unwritable too, the
    status alone."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if not buffered:
        env["PYTHONUNBUFFERED"] = "1"
    command = [sys.executable, "-m", "streamscope", *args]
    with open("/dev/full", "wb") as full:
        done = subprocess.run(command, stdout=full, stderr=subprocess.PIPE, env=env, timeout=60)
        mute = subprocess.run(command, stdout=full, stderr=full, env=env, timeout=60)
    said = b"streamscope: standard output: No space left on device\n"
    assert (done.returncode, done.stderr) == (2, said)
    assert mute.returncode == 2


def test_a_closed_standard_error_sends_nothing_to_standard_output():
    # `2>&-`: the one-line error is discarded, never written to stdout (print's default)
    done = subprocess.run(
        ["sh", "-c", 'exec "$@" 2>&-', "sh", sys.executable, "-m", "streamscope"]
        + ["inspect", "--json", "/nonexistent"],
        capture_output=True,
        timeout=60,
    )
    assert (done.returncode, done.stdout) == (2, b"")


def test_shell_completion_as_the_readme_says():
    env = {**os.environ, "_STREAMSCOPE_COMPLETE": "bash_source"}
    script = subprocess.run([SCRIPT], env=env, capture_output=True, text=True, timeout=30)
    assert "_streamscope_completion" in script.stdout
    env = {**os.environ, "_STREAMSCOPE_COMPLETE": "bash_complete"}
    env |= {"COMP_WORDS": "streamscope export --fo", "COMP_CWORD": "2"}
    words = subprocess.run([SCRIPT], env=env, capture_output=True, text=True, timeout=30)
    assert "plain,--format" in words.stdout.splitlines()


@pytest.mark.slow
def test_replay_of_an_exchange_the_recording_lacks_prints_only_its_error():
    """Piped, as in a script: the one line and no screen (no escape codes) before it."""
    done = subprocess.run(
        [sys.executable, "-m", "streamscope", "replay", f"{OPENAI}#5"],
        capture_output=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert done.returncode == 2, done
    assert done.stdout == b""
    lines = done.stderr.decode().splitlines()
    assert lines == [f"streamscope: {OPENAI}: there is no exchange 5 (exchanges: 1, 2)"], lines


@pytest.mark.parametrize("args", [["-"], [OPENAI, "-"]])
def test_a_dash_is_standard_input_and_replay_says_it_reads_its_keys_there(args):
    with open(OPENAI, "rb") as f:
        sample = f.read()
    export = [sys.executable, "-m", "streamscope", "export", "--format", "recording"]
    exported = subprocess.run([*export, "-"], input=sample, capture_output=True, timeout=60)
    assert exported.stdout == subprocess.run([*export, OPENAI], capture_output=True).stdout
    assert exported.returncode == 0 and exported.stdout.startswith(b'{"type":"header"')
    done = subprocess.run(
        [sys.executable, "-m", "streamscope", "replay", *args],
        input=sample,
        capture_output=True,
        timeout=60,
    )
    assert (done.returncode, done.stdout) == (2, b"")
    assert done.stderr.decode().splitlines() == [
        "streamscope: -: replay reads its keys from standard input: save the stream to a file first"
    ]


@pytest.mark.parametrize(
    "args, given",
    [
        (["/dev/stdin"], "piped"),  # cat rec.jsonl | streamscope replay /dev/stdin
        ([OPENAI], "piped"),
        ([OPENAI], "none"),  # < /dev/null
        ([OPENAI, os.path.join(ROOT, "recordings", "gateway-litellm.jsonl")], "none"),
    ],
)
def test_replay_with_no_terminal_on_standard_input_says_so_before_any_screen(args, given):
    # Textual reads its keys from standard input: a pipe there gave a screen no key
    # reached (the stream's bytes, then none), that only Ctrl-C left
    with open(OPENAI, "rb") as f:
        sample = f.read()
    stdin = {"input": sample} if given == "piped" else {"stdin": subprocess.DEVNULL}
    done = subprocess.run(
        [sys.executable, "-m", "streamscope", "replay", *args],
        capture_output=True,
        timeout=30,
        **stdin,
    )
    assert (done.returncode, done.stdout) == (2, b"")
    assert done.stderr.decode().splitlines() == [
        "streamscope: standard input is not a terminal: replay reads its keys there "
        "(a piped stream: pass it as <(cmd), or save it to a file first)"
    ]


@pytest.mark.parametrize(
    "args, said",
    [
        (["recordings/alibaba-empty-id.jsonl", "--exchange", "1", "--frame", "99"], "1-8"),
        ([f"{OPENAI}#2", "--frame", "500"], "1-"),
        (["recordings/gemini-no-index.sse", "--frame", "99"], "1-"),
    ],
)
def test_replay_of_a_frame_past_the_stream_is_said_before_the_screen(monkeypatch, args, said):
    from streamscope.tui.app import ReplayApp

    def run(self):
        raise AssertionError("the screen was started")

    monkeypatch.setattr(ReplayApp, "run", run)
    monkeypatch.chdir(ROOT)
    done = CliRunner().invoke(main, ["replay", *args])
    assert done.exit_code == 2, done.output
    assert f"--frame {args[-1]}: the stream has frames {said}" in done.output
    assert done.output.strip().count("\n") == 0, done.output
