"""The documentation: the README and docs/ stay inside the repository, say what the code
does, and build.

- no document links outside the repository, and every relative link resolves;
- the anomaly reference (docs/anomalies.md) is what scripts/anomaly_reference.py writes
  from the registries, so a new kind cannot ship without its entry;
- the replay's key table (docs/commands/replay.md) is what scripts/key_table.py writes
  from the keys the replay binds;
- the README stays a five-minute read (under 12 KB) and opens with its two commands;
- `mkdocs build --strict` passes, where mkdocs is installed (the `docs` extra).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from streamscope.core import contract
from streamscope.dialects import ANOMALY_KINDS

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = sorted(
    [ROOT / "README.md", ROOT / "CHANGELOG.md", ROOT / "recordings" / "README.md"]
    + [p for p in (ROOT / "docs").rglob("*.md") if "screenshots" not in p.parts]
)
FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
# Words only the people who built streamscope know: a user cannot look them up.
JARGON = re.compile(
    r"seed §|seed's section|the brief|issue \d+|Appendix A|notes T\d|research §|"
    r"dialects\.md|provider-quirks\.md|shared/spec|\.\./shared",
    re.I,
)


def _prose(path: Path) -> str:
    """The text of a document outside code blocks and code spans, where links live."""
    return CODE.sub("", FENCE.sub("", path.read_text(encoding="utf-8")))


def _anchors(path: Path) -> set[str]:
    """The anchors mkdocs' toc extension makes of a page's headings."""
    found = set()
    for heading in re.findall(r"^#+ (.+)$", FENCE.sub("", path.read_text()), re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).strip()
        found.add(re.sub(r"[-\s]+", "-", slug))
    return found


def test_the_documents_are_found():
    names = {p.relative_to(ROOT).as_posix() for p in DOCUMENTS}
    assert {"README.md", "CHANGELOG.md", "docs/index.md", "docs/anomalies.md"} <= names


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_link_leaves_the_repository_and_every_link_resolves(path: Path):
    prose = _prose(path)
    assert not re.findall(r"https?://\S+", prose), "a link outside the repository"
    broken = []
    for target in LINK.findall(prose):
        file, _, anchor = target.partition("#")
        resolved = (path.parent / file).resolve() if file else path
        if (
            not resolved.exists()
            or anchor
            and resolved.suffix == ".md"
            and anchor not in _anchors(resolved)
        ):
            broken.append(target)
    assert broken == []


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_words_only_the_team_knows(path: Path):
    assert JARGON.findall(path.read_text(encoding="utf-8")) == []


def _script(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _reference():
    return _script("anomaly_reference")


def test_every_kind_has_an_entry_in_the_anomaly_reference():
    page = (ROOT / "docs" / "anomalies.md").read_text(encoding="utf-8")
    entries = set(re.findall(r"^### `([a-z0-9-]+)`$", page, re.M))
    missing = (set(ANOMALY_KINDS) | set(contract.KINDS)) - entries
    assert missing == set(), "run scripts/anomaly_reference.py"


@pytest.mark.slow
def test_the_anomaly_reference_is_what_the_registries_write():
    page = (ROOT / "docs" / "anomalies.md").read_text(encoding="utf-8")
    assert page == _reference().render(), "run scripts/anomaly_reference.py"


def test_the_replay_page_lists_every_key_the_replay_binds():
    script = _script("key_table")
    page = script.PAGE.read_text(encoding="utf-8")
    assert page == script.render(page), "run scripts/key_table.py"
    # the check sees the keys: one changed key is a page out of date
    from streamscope.tui import keys

    stale = page.replace(f"| {keys.HELP.what} |", "| help |")
    assert stale != page and script.render(stale) != stale


def test_each_entry_names_the_dialects_that_report_it():
    where = _reference().named_by()
    assert set(ANOMALY_KINDS) | set(contract.KINDS) <= set(where)


def test_the_readme_is_a_five_minute_read():
    readme = (ROOT / "README.md").read_bytes()
    assert len(readme) < 12 * 1024
    first_block = readme.decode().split("```sh\n", 1)[1].split("```", 1)[0].splitlines()
    assert first_block[0].endswith("streamscope replay recordings/alibaba-empty-id.jsonl")
    assert first_block[1] == "python3 -m venv .venv && scripts/check --install"


def test_the_readmes_inspect_sample_is_what_inspect_prints(monkeypatch):
    """The README shows `streamscope inspect` on a sample: it is that command's output today
    (its table's trailing padding aside), so a change to the report shows up here first."""
    from click.testing import CliRunner

    from streamscope.cli import main

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    command, sample = readme.split("`streamscope inspect\n", 1)[1].split("` says:", 1)
    shown = sample.split("```\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(ROOT)  # the report names the file as given
    done = CliRunner().invoke(main, ["inspect", command])
    assert done.exit_code == 0, done.output
    printed = "\n".join(line.rstrip() for line in done.output.splitlines()) + "\n"
    assert shown == printed, "the README's inspect sample is stale: paste what inspect prints"


def test_the_scan_pages_samples_are_what_scan_prints_of_the_bundled_recordings(monkeypatch):
    """docs/commands/scan.md shows `scan recordings`'s summary (its blocks in part, `...`
    between) and a `--jsonl` row: each is what scan says of the samples today (the times
    aside), so a sample added or changed shows up here."""
    import orjson
    from click.testing import CliRunner

    from streamscope.cli import main

    page = (ROOT / "docs" / "commands" / "scan.md").read_text(encoding="utf-8")
    summary = page.split("## The summary\n\n```\n", 1)[1].split("```", 1)[0]
    row = page.split("## Rows: `--jsonl`", 1)[1].split("```json\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(ROOT)
    said = CliRunner().invoke(main, ["scan", "recordings"]).output
    untimed = re.sub(r" in [0-9.]+ s:", " in _ s:", said)
    for part in summary.split("...\n"):
        part = re.sub(r" in [0-9.]+ s:", " in _ s:", part.strip("\n"))
        assert part.split(": ...")[0] in untimed, f"scan.md's summary is stale: {part}"
    shown = orjson.loads(row)
    rows = CliRunner().invoke(main, ["scan", "--jsonl", "recordings"]).stdout.splitlines()
    (now,) = [
        r
        for r in map(orjson.loads, rows)
        if (r.get("file"), r.get("exchange")) == (shown["file"], shown["exchange"])
    ]
    assert {**now, "duration_ms": None} == {**shown, "duration_ms": None}, now


def test_the_readme_and_records_page_name_every_variable_record_sets():
    from streamscope.providers import env_names

    readme = (ROOT / "README.md").read_text()
    said = readme.split("**`streamscope record", 1)[1].split("**`streamscope proxy", 1)[0]
    page = (ROOT / "docs" / "commands" / "record.md").read_text()
    for name in env_names():
        assert f"`{name}`" in said, name
        assert f"`{name}`" in page, name


# a recording a shell example names: `recordings/NAME.jsonl` (not a folder's file)
SAMPLE_PATH = re.compile(r"(?<![\w/.-])recordings/[\w.-]+\.(?:jsonl|sse|ndjson)\b")


@pytest.mark.parametrize(
    "path", sorted((ROOT / "docs" / "commands").glob("*.md")), ids=lambda p: p.name
)
def test_every_recording_a_command_example_reads_is_there_or_made_by_it(path: Path):
    """Copied as written, an example runs: the recording it reads is a bundled sample, or
    one the same example writes first (`-o PATH`)."""
    missing = []
    for block in (m.group(0) for m in FENCE.finditer(path.read_text(encoding="utf-8"))):
        made = set(re.findall(r"-o\s+(\S+)", block))
        missing += [
            p for p in SAMPLE_PATH.findall(block) if p not in made and not (ROOT / p).exists()
        ]
    assert missing == []


def test_every_command_has_a_page():
    import click

    from streamscope.cli import main

    names = main.list_commands(click.Context(main))  # (the lazily defined ones too)
    assert {"inspect", "record", "proxy"} <= set(names)
    pages = {p.stem for p in (ROOT / "docs" / "commands").glob("*.md")}
    assert set(names) <= pages
    readme = (ROOT / "README.md").read_text()
    for name in names:
        assert f"(docs/commands/{name}.md)" in readme, name


@pytest.mark.skipif(
    importlib.util.find_spec("mkdocs") is None, reason="mkdocs is not installed (the docs extra)"
)
def test_mkdocs_build_strict(tmp_path):
    mkdocs = shutil.which("mkdocs", path=os.path.dirname(sys.executable)) or "mkdocs"
    done = subprocess.run(
        [mkdocs, "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def proxy_server(tmp_path_factory):
    """A proxy as `streamscope proxy` makes it (every side's default upstream), not started."""
    from streamscope.providers import DEFAULT_SIDE, sides
    from streamscope.record.proxy import ProxyServer, Upstream
    from streamscope.record.runner import parse_sides
    from streamscope.recording import RecordingWriter

    urls = {side.name: side.upstream(None, {}) for _, side in sides()}
    url = urls.pop(DEFAULT_SIDE.name)
    with RecordingWriter(tmp_path_factory.mktemp("proxy") / "r.jsonl") as writer:
        server = ProxyServer(Upstream.parse(url), writer, 0, sides=parse_sides(urls))
        yield server
        server.sock.close()


def test_the_proxy_pages_sample_is_what_proxy_prints(proxy_server):
    page = (ROOT / "docs" / "commands" / "proxy.md").read_text()
    shown = page.split("With `--port 8080` it prints:\n\n```\n", 1)[1].split("```", 1)[0]
    printed = [proxy_server.base_url_of(r.side.name) for r in proxy_server.routes]
    port = f":{proxy_server.port}/"
    assert shown.splitlines() == [u.replace(port, ":8080/") for u in printed]


def test_the_start_up_list_names_every_variable_the_command_gets(proxy_server):
    from streamscope.providers import env_names
    from streamscope.record.runner import base_url_variables, describe_sides

    listed = describe_sides(proxy_server, ["MY_BASE"])
    assert len(listed) == len(proxy_server.routes)  # one line per side
    assert listed[0].startswith(
        f"OPENAI_BASE_URL={proxy_server.base_url} (also OPENAI_API_BASE, MY_BASE) -> "
    )
    said: set[str] = set()
    for line in listed:
        first, rest = line.split("=", 1)
        said.add(first)
        if "(also " in rest.split(" -> ")[0]:
            said.update(rest.split("(also ", 1)[1].split(")", 1)[0].split(", "))
    assert said == {*env_names(), "MY_BASE"} == set(base_url_variables(proxy_server, ["MY_BASE"]))


def test_no_message_points_at_a_path_a_pip_user_lacks(tmp_path, capsys):
    from types import SimpleNamespace

    from streamscope.record.runner import summarize

    summarize(SimpleNamespace(removed=True, path=str(tmp_path / "r.jsonl")), "X=1")  # type: ignore[arg-type]
    said = capsys.readouterr().err
    assert "made no request" in said and "docs/" not in said
    assert said.rstrip().endswith('see "Recording coding agents" in streamscope\'s docs')
