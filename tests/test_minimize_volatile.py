"""`export --minimal` drops the volatile fields its page names, in every dialect's
samples that hold them; the ones it keeps are kept because a finding or a client needs
them, as the page says."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from streamscope.analysis import analyze
from streamscope.export.fixtures import export

ROOT = Path(__file__).resolve().parents[1]
PAGE = (ROOT / "docs" / "commands" / "export.md").read_text()

# one sample per dialect with volatile fields in its frames
SAMPLES = [
    "openai.jsonl",
    "deepseek-cumulative.chunks.jsonl",
    "responses-parallel-wrapper.jsonl",
    "gemini-parallel-signature.jsonl",
    "anthropic-tool-use.jsonl",
]


def _named() -> list[str]:
    """The volatile fields the `--minimal` section says are dropped."""
    said = PAGE.split("## `--minimal`", 1)[1].split("volatile fields (", 1)[1].split(")", 1)[0]
    return re.findall(r"`(\w+)`", said)


def _chunks(data: bytes) -> str:
    return "\n".join(line for line in data.decode().splitlines() if '"type":"chunk"' in line)


def test_the_page_and_the_help_name_the_same_fields():
    from click.testing import CliRunner

    from streamscope.cli import main

    named = _named()
    assert named and "created" not in named  # kept in Chat Completions: see below
    shown = CliRunner().invoke(main, ["export", "--help"]).output
    assert all(name in " ".join(shown.split()) for name in named)


def test_each_named_field_is_held_by_a_sample():
    texts = [(ROOT / "recordings" / n).read_text() for n in SAMPLES]
    assert all(any(f'{f}\\":' in t for t in texts) for f in _named())


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.slow) if "responses" in n else n for n in SAMPLES]
)
def test_every_named_volatile_field_is_dropped_where_a_sample_holds_it(name):
    path = str(ROOT / "recordings" / name)
    original = (ROOT / "recordings" / name).read_text().replace('\\"', '"')
    minimal = _chunks(export(path, "recording", exchange=1, minimal=True).data)
    minimal = minimal.replace('\\"', '"')
    held = [f for f in _named() if f'"{f}":' in original]
    for field in held:
        assert f'"{field}":' not in minimal, field


def test_the_fields_kept_are_the_ones_the_page_says_a_finding_or_a_client_needs(tmp_path):
    assert "Chat Completions' `created`" in PAGE and "Anthropic's `usage`" in PAGE
    chat = _chunks(
        export(str(ROOT / "recordings" / "openai.jsonl"), "recording", minimal=True).data
    )
    assert '\\"created\\":' in chat
    data = export(str(ROOT / "recordings" / "anthropic-tool-use.jsonl"), "sse", minimal=True).data
    assert b'"usage":' in data
    without = tmp_path / "no-usage.sse"
    without.write_bytes(re.sub(rb',"usage":\{[^}]*\}', b"", data))
    (stream,) = analyze(str(without)).streams
    assert "AttributeError" in str(stream.strategies["anthropic-sdk"])
