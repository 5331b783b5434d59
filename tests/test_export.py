"""`streamscope export`: golden byte-exact fixtures, and the exported pytest module runs green."""

from __future__ import annotations

import os
import subprocess
import sys

import orjson
import pytest
from click.testing import CliRunner

from streamscope.cli import main
from streamscope.recording import RecordingIndex

from .helpers import run_demo

pytestmark = pytest.mark.slow  # the fast run (-m 'not slow') leaves it out

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOLDEN = os.path.join(ROOT, "tests", "golden")
CASES = [
    ("recordings/alibaba-empty-id.jsonl", [], "alibaba-empty-id"),
    ("recordings/openai.jsonl", ["--frames", "2-5"], "openai-frames-2-5"),
]


def export(*args: str):
    old = os.getcwd()
    os.chdir(ROOT)  # the pytest module names its source as given
    try:
        return CliRunner().invoke(main, ["export", *args])
    finally:
        os.chdir(old)


@pytest.mark.parametrize("fmt", ["sse", "chunks", "recording", "pytest"])
@pytest.mark.parametrize("source, extra, name", CASES)
def test_golden_exports(source, extra, name, fmt):
    result = export(source, *extra, "--format", fmt)
    assert result.exit_code == 0, result.output
    with open(os.path.join(GOLDEN, f"{name}.{fmt}"), "rb") as f:
        assert result.stdout_bytes == f.read()


def test_sse_export_is_every_byte_as_received():
    result = export("recordings/openai.jsonl", "--exchange", "2")
    with RecordingIndex.open(os.path.join(ROOT, "recordings", "openai.jsonl")) as index:
        recorded = b"".join(c.data_bytes for c in index.chunks(2))
    assert result.stdout_bytes == recorded


CHAT_SAMPLES = [
    "alibaba-empty-id.jsonl",
    "parallel-index-0.jsonl",
    "gemini-no-index.sse",
    "deepseek-cumulative.chunks.jsonl",
]


def exporter(sample: str, *extra: str):
    """A batch writer: `sample` exported as a pytest module at the path it is given."""

    def write(module) -> None:
        result = export(f"recordings/{sample}", "--format", "pytest", "-o", str(module), *extra)
        assert result.exit_code == 0, result.output

    return write


def openai_batch(together) -> dict:
    """Every module that needs only openai and pytest, run by one such pytest: the Chat
    Completions samples' and the Responses samples' (whole and --minimal), and two
    that import what it lacks."""
    writers = {s: exporter(s) for s in CHAT_SAMPLES}
    writers["needs-httpx"] = _needing("httpx2", "httpx")
    writers["needs-streamscope"] = _needing("streamscope")
    for sample in RESPONSES_SAMPLES:
        writers[sample] = exporter(sample)
        writers[f"{sample}-minimal"] = exporter(sample, "--minimal")
    return together.run("only-openai", writers, *only("openai"))


@pytest.mark.parametrize("sample", CHAT_SAMPLES)
def test_the_exported_pytest_module_runs_green_with_only_openai_and_pytest(together, sample):
    ran = openai_batch(together)[sample]
    assert ran.green, ran.text


def test_the_isolated_python_really_lacks_httpx_and_streamscope(together):
    ran = openai_batch(together)  # the same process that ran the modules above
    assert ran["needs-httpx"].errors == 1
    assert "No module named 'httpx' (only openai and pytest)" in ran["needs-httpx"].text
    assert ran["needs-streamscope"].errors == 1
    assert "No module named 'streamscope'" in ran["needs-streamscope"].text


def _needing(*names: str):
    def write(module) -> None:
        imports = "".join(f"import {n}\n" for n in names)
        module.write_text(f"{imports}\ndef test_x():\n    pass\n")

    return write


def only(sdk: str = "openai", *more: str) -> tuple[list[str], dict[str, str]]:
    """The command and environment of a pytest in a Python where only `sdk` (openai,
    anthropic, or one with its extras: anthropic[bedrock]), pytest and `more` (pytest
    plugins, which then load only when named with -p) import."""
    tops = (sdk, "pytest", *more)
    code = ONLY_OPENAI_AND_PYTEST.replace('("openai", "pytest")', repr(tops))
    words = ", ".join(tops[:-1]) + " and " + tops[-1]
    code = code.replace("(only openai and pytest)", f"(only {words})")
    return [sys.executable, "-c", code], {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}


def only_openai_and_pytest(module, sdk: str = "openai") -> subprocess.CompletedProcess:
    """pytest on `module` in a Python where only `sdk` and pytest import."""
    command, env = only(sdk)
    return subprocess.run(
        [*command, "-q", "-p", "no:cacheprovider", str(module)],
        cwd=module.parent,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


# pytest in a Python where only openai (with what it depends on) and pytest can be
# imported: any other package in this venv raises ModuleNotFoundError, as in a fresh
# virtualenv with just those two installed.
ONLY_OPENAI_AND_PYTEST = """
import importlib.abc, importlib.metadata, re, sys

def needs(dist, seen, extras=()):
    if dist.lower() in seen:
        return
    seen.add(dist.lower())
    try:
        reqs = importlib.metadata.requires(dist) or []
    except importlib.metadata.PackageNotFoundError:  # a marker for another Python
        return
    for req in reqs:
        marker = req.partition(";")[2].replace('"', "'")
        if "extra ==" not in marker or any(f"extra == '{e}'" in marker for e in extras):
            needs(re.match(r"[A-Za-z0-9._-]*", req.strip()).group(), seen)  # its name

allowed = set()
for top in ("openai", "pytest"):  # a top package may name its extras: "anthropic[bedrock]"
    name, _, extras = top.partition("[")
    needs(name, allowed, tuple(e for e in extras.rstrip("]").split(",") if e))
names = set()
for dist in importlib.metadata.distributions():
    if dist.metadata["Name"].lower().replace("_", "-") in {a.replace("_", "-") for a in allowed}:
        names.update((dist.read_text("top_level.txt") or "").split())
        for f in dist.files or []:
            names.add(f.parts[0].removesuffix(".py"))

class OnlyThose(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        top = name.partition(".")[0]
        if top in sys.stdlib_module_names or top in names or top.startswith("_"):
            return None
        raise ModuleNotFoundError(f"No module named {top!r} (only openai and pytest)")

sys.meta_path.insert(0, OnlyThose())
import pytest
sys.exit(pytest.main(sys.argv[1:]))
"""


ANTHROPIC_SAMPLES = [
    "anthropic-tool-use.jsonl",
    "anthropic-max-tokens.jsonl",
    "anthropic-spliced-message.jsonl",
]


@pytest.mark.parametrize("sample", ANTHROPIC_SAMPLES)
def test_an_anthropic_pytest_module_runs_green_with_only_anthropic_and_pytest(together, sample):
    writers = {"needs-openai": _needing("openai")}
    for each in ANTHROPIC_SAMPLES:
        writers[each] = exporter(each)
        writers[f"{each}-minimal"] = exporter(each, "--minimal")
    ran = together.run("only-anthropic", writers, *only("anthropic"))
    for key in (sample, f"{sample}-minimal"):
        text = ran[key].module.read_text()
        assert "anthropic.Anthropic(" in text and "NOTE" not in text, key
        assert ran[key].green, ran[key].text
    lacking = ran["needs-openai"]  # it really lacks openai
    assert lacking.errors == 1 and "No module named 'openai'" in lacking.text


def test_an_anthropic_minimal_fixture_keeps_its_event_names_and_its_trap(tmp_path):
    out = tmp_path / "min.sse"
    result = export("recordings/anthropic-spliced-message.jsonl", "--minimal", "-o", str(out))
    assert result.exit_code == 0 and "11 frames -> " in result.output, result.output
    body = out.read_bytes()
    assert body.count(b"event: ") == body.count(b"data: ")  # every event keeps its name
    doc = __import__("orjson").loads(
        CliRunner().invoke(main, ["inspect", "--json", str(out)]).output
    )
    (stream,) = doc["streams"]
    assert stream["dialect"] == "anthropic-messages"
    kinds = {a["kind"] for a in stream["anomalies"]}
    assert {"message-start-repeated", "block-stop-missing", "args-invalid-json"} <= kinds
    assert stream["strategies"]["anthropic-sdk"]["differs"] is True


def test_an_anthropic_recording_export_keeps_the_request_and_the_names(tmp_path):
    out = tmp_path / "one.jsonl"
    args = ["--format", "recording", "--frames", "1-9", "-o", str(out)]
    assert export("recordings/anthropic-tool-use.jsonl", *args).exit_code == 0
    doc = __import__("orjson").loads(
        CliRunner().invoke(main, ["inspect", "--json", str(out)]).output
    )
    assert doc["streams"][0]["dialect"] == "anthropic-messages"
    assert "event: content_block_start" in out.read_text()


RESPONSES_SAMPLES = [
    "responses-done-only.jsonl",
    "responses-done-mismatch.jsonl",
    "responses-interleaved.jsonl",
    "responses-parallel-wrapper.jsonl",
    "responses-custom-tool.jsonl",
]


@pytest.mark.parametrize("sample", RESPONSES_SAMPLES)
def test_a_responses_pytest_module_runs_green_with_only_openai_and_pytest(together, sample):
    ran = openai_batch(together)
    for key in (sample, f"{sample}-minimal"):
        text = ran[key].module.read_text()
        assert "client.responses.create(" in text and "NOTE" not in text, key
        assert '"call_id":' in text and '"item_id":' in text, key
        assert ran[key].green, ran[key].text


@pytest.mark.parametrize(
    "sample, kinds",
    [
        ("responses-done-only.jsonl", {"args-done-only"}),
        ("responses-done-mismatch.jsonl", {"args-done-mismatch"}),
        # (an info: the minimal stream keeps what current-item gets wrong, not the info)
        ("responses-interleaved.jsonl", set()),
        ("responses-parallel-wrapper.jsonl", {"parallel-wrapper"}),
    ],
)
def test_a_responses_minimal_fixture_keeps_its_event_names_and_its_trap(tmp_path, sample, kinds):
    out = tmp_path / "min.sse"
    result = export(f"recordings/{sample}", "--minimal", "-o", str(out))
    assert result.exit_code == 0 and " frames -> " in result.output, result.output
    body = out.read_bytes()
    assert body.count(b"event: ") == body.count(b"data: ")  # every event keeps its name
    assert b"obfuscation" not in body  # padding never matters
    doc = orjson.loads(CliRunner().invoke(main, ["inspect", "--json", str(out)]).output)
    (stream,) = doc["streams"]
    assert stream["dialect"] == "openai-responses"
    assert kinds <= {a["kind"] for a in stream["anomalies"]}
    whole = orjson.loads(
        CliRunner().invoke(main, ["inspect", "--json", f"recordings/{sample}"]).output
    )
    differs = {n for n, s in whole["streams"][0]["strategies"].items() if s.get("differs")}
    assert differs == {n for n, s in stream["strategies"].items() if s.get("differs")}


def test_a_responses_recording_export_keeps_the_request_and_the_names(tmp_path):
    out = tmp_path / "one.jsonl"
    args = ["--format", "recording", "--frames", "1-8", "-o", str(out)]
    assert export("recordings/responses-interleaved.jsonl", *args).exit_code == 0
    doc = orjson.loads(CliRunner().invoke(main, ["inspect", "--json", str(out)]).output)
    assert doc["streams"][0]["dialect"] == "openai-responses"
    assert "event: response.output_item.added" in out.read_text()


def test_bad_ranges_and_overwrites_are_refused(tmp_path):
    result = export("recordings/openai.jsonl", "--frames", "9-99")
    assert result.exit_code == 2 and "frames 1-11" in result.output
    result = export("recordings/openai.jsonl", "--frames", "9-3")
    lines = result.output.splitlines()
    assert result.exit_code == 2 and len(lines) == 1, result.output
    assert lines[0].startswith(
        "streamscope: recordings/openai.jsonl: --frames 9-3: the range is reversed"
    )
    assert "frame 9 comes after frame 3" in lines[0]
    existing = tmp_path / "x.sse"
    existing.write_text("keep")
    result = export("recordings/openai.jsonl", "-o", str(existing))
    assert result.exit_code == 2 and existing.read_text() == "keep"


def test_demo_records_the_agent_against_a_served_sample(tmp_path):
    env = {**os.environ, "OPENAI_API_KEY": "sk-demo-test"}
    done = run_demo(tmp_path, "parallel-index-0", env, "--speed", "0")
    assert done.returncode == 0, done.stderr
    (made,) = (tmp_path / "recordings").glob("streamscope-*.jsonl")
    # the agent merged the two calls collapsed on index 0; the recording says so
    assert "index-reused" in done.stderr and "tool-call-dropped" in done.stderr
    assert "sk-demo-test" not in made.read_text()


def test_demo_records_an_anthropic_agent_against_a_served_sample(tmp_path):
    done = run_demo(
        tmp_path,
        "anthropic-spliced-message",
        {**os.environ, "ANTHROPIC_API_KEY": "sk-ant-demo-test"},
        "--speed",
        "0",
    )
    assert done.returncode == 0, done.stderr
    (made,) = (tmp_path / "recordings").glob("streamscope-*.jsonl")
    # the agent on the anthropic SDK sent back what the SDK glued; the recording says so
    assert "message-start-repeated" in done.stderr
    assert "tool-call-arguments-changed" in done.stderr
    assert '"Osl{"' in done.stdout
    assert "sk-ant-demo-test" not in made.read_text()


def test_demo_records_a_boto3_agent_against_the_served_bedrock_sample(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    done = run_demo(tmp_path, "bedrock-text-without-start", env, "--speed", "0")
    assert done.returncode == 0, done.stderr
    (made,) = (tmp_path / "recordings").glob("streamscope-*.jsonl")
    # boto3 signed with the demo's own credentials, signed again by the proxy; the agent
    # keyed blocks by contentBlockIndex, so its call came back whole and was answered
    assert '"input": {"city": "Paris"}' in done.stdout and "14" in done.stdout
    assert "text-after-tool-start" in done.stderr
    report = subprocess.run(
        [sys.executable, "-m", "streamscope", "inspect", str(made)], capture_output=True, text=True
    )
    assert "every assembled call came back unchanged" in report.stdout, report.stdout
    assert "streamscope-placeholder" not in made.read_text()  # the access key id is masked


def test_demo_records_a_responses_agent_against_a_served_sample(tmp_path):
    done = run_demo(
        tmp_path,
        "responses-done-mismatch",
        {**os.environ, "OPENAI_API_KEY": "sk-proj-demo-test"},
        "--speed",
        "0",
    )
    assert done.returncode == 0, done.stderr
    (made,) = (tmp_path / "recordings").glob("streamscope-*.jsonl")
    # the agent on responses.stream() got the call whole despite the empty .done
    assert "args-done-mismatch" in done.stderr
    (call,) = orjson.loads(done.stdout)["calls"]
    assert call["arguments"] == '{"query":"rate limits for the batch API"}'
    doc = orjson.loads(CliRunner().invoke(main, ["inspect", "--json", str(made)]).output)
    assert [s["dialect"] for s in doc["streams"]] == ["openai-responses"] * 2
    assert doc["contract"] == []
    assert "sk-proj-demo-test" not in made.read_text()


@pytest.mark.parametrize(
    "sample, contract",
    [
        # AI Studio, whole calls: the chat sends both parts back, the signature on the first
        ("gemini-parallel-signature", []),
        # Vertex AI, streamed arguments: google-genai's users collect every part as a call,
        # so the agent answers the nameless pieces too, with results no call has
        ("gemini-streamed-args", ["tool-result-id-mismatch"]),
    ],
)
def test_demo_records_a_google_genai_agent_against_a_served_sample(tmp_path, sample, contract):
    done = run_demo(
        tmp_path,
        sample,
        {**os.environ, "GEMINI_API_KEY": "AIzaSyDemoTest0000000000000000000000000"},
        "--speed",
        "0",
    )
    assert done.returncode == 0, done.stderr
    (made,) = (tmp_path / "recordings").glob("streamscope-*.jsonl")
    doc = orjson.loads(CliRunner().invoke(main, ["inspect", "--json", str(made)]).output)
    assert [s["dialect"] for s in doc["streams"]] == ["gemini"] * 2
    assert [f["kind"] for f in doc["contract"]] == contract
    assert doc["streams"][0]["tool_calls"][0]["thought_signature"].startswith("CiQBjz1r")
    assert "AIzaSyDemoTest" not in made.read_text()


def test_demo_lists_its_samples():
    result = CliRunner().invoke(main, ["demo", "list"])
    assert result.exit_code == 0 and "alibaba-empty-id" in result.output.split()
    assert CliRunner().invoke(main, ["demo", "nope"]).exit_code == 2


def test_minimal_fixture_keeps_the_quirk_and_says_how_much_it_shrank(tmp_path):
    out = tmp_path / "min.sse"
    result = export("recordings/alibaba-empty-id.jsonl", "--minimal", "-o", str(out))
    assert result.exit_code == 0, result.output
    assert "8 frames -> " in result.output
    kinds = {
        a["kind"]
        for a in __import__("orjson").loads(
            CliRunner().invoke(main, ["inspect", "--json", str(out)]).output
        )["streams"][0]["anomalies"]
    }
    assert {"id-empty-overwrite", "name-empty-overwrite"} <= kinds
    assert out.read_bytes().count(b"data: ") <= 4  # at most a third of 8 frames, or 4


@pytest.mark.parametrize("base", ["httpx2", "httpx", None])
def test_the_exported_module_uses_the_package_openai_is_built_on(tmp_path, base, monkeypatch):
    import importlib
    import types

    module = tmp_path / "test_fixture.py"
    assert export("recordings/openai.jsonl", "--format", "pytest", "-o", str(module)).exit_code == 0
    fake = types.ModuleType("openai")  # an openai on httpx2, on httpx, or older than both
    if base is not None:
        client = importlib.import_module(base).Client
        fake.DefaultHttpxClient = type("DefaultHttpxClient", (client,), {})
    monkeypatch.setitem(sys.modules, "openai", fake)
    scope: dict = {}
    exec(compile(module.read_text(), str(module), "exec"), scope)
    assert scope["http"].__name__ == (base or "httpx")


@pytest.mark.parametrize("line", [b"null", b"true", b"1", b'"x"', b"[1]"])
@pytest.mark.parametrize("args", [["--format", "sse"], ["--format", "vcr"], ["--minimal"]])
def test_a_line_that_is_not_an_object_is_said_so(tmp_path, args, line):
    """Every export says so, as inspect does (a `null` line was said to hold a lone
    surrogate or an integer past 64 bits)."""
    with open(os.path.join(ROOT, "recordings", "openai.jsonl"), "rb") as f:
        header = f.readline()
    path = tmp_path / "r.jsonl"
    path.write_bytes(header + line + b"\n")
    done = CliRunner().invoke(main, ["export", *args, "-o", str(tmp_path / "out"), str(path)])
    said = f"{path}: line 2 (byte {len(header)}): not a JSON object"
    assert done.exit_code == 2 and said in done.output
