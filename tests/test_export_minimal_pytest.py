"""`export --minimal --format pytest` asserts the calls the provider sent: its minimiser
joins argument fragments but never drops one, where an SSE `--minimal` may (it keeps the
findings alone), so the module's EXPECTED is both what its frames yield and what the
provider's stream held."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from streamscope.analysis import analyze
from streamscope.export.fixtures import export

ROOT = Path(__file__).resolve().parents[1]

# streams whose findings-only minimal drops argument fragments (a different call results)
SAMPLES = [
    ("alibaba-empty-id.jsonl", "arguments"),
    ("gemini-unterminated.jsonl", "args"),
]


def _robust_args(path: str) -> list[object]:
    (stream,) = [s for s in analyze(path).streams if s.exchange == 1]
    return [c.arguments for c in stream.tool_calls]


def _expected(module: str) -> list[dict]:
    return ast.literal_eval(module.split("\nEXPECTED = ", 1)[1].split("\n\n", 1)[0])


def _same(a: object, b: object) -> bool:
    import json

    def value(x: object) -> object:
        try:
            return json.loads(x) if isinstance(x, str) else x
        except ValueError:
            return x

    return value(a) == value(b)


@pytest.mark.slow
@pytest.mark.parametrize("name, field", SAMPLES)
def test_a_minimal_pytest_module_asserts_the_arguments_the_provider_sent(tmp_path, name, field):
    path = str(ROOT / "recordings" / name)
    sent = _robust_args(path)
    # the findings-only minimal stream yields other arguments: fragments were dropped
    small = tmp_path / "small.sse"
    small.write_bytes(export(path, "sse", exchange=1, minimal=True).data)
    assert not all(map(_same, _robust_args(str(small)), sent))

    done = export(path, "pytest", exchange=1, minimal=True)
    module = done.data.decode()
    assert done.frames_out <= max(4, done.frames_in // 2)  # still minimised
    asserted = [call[field] for call in _expected(module)]
    assert len(asserted) == len(sent) and all(map(_same, asserted, sent)), (asserted, sent)
    # and the module passes: its frames yield what it asserts
    scope: dict = {"__name__": "exported"}
    exec(compile(module, str(tmp_path / "test_exported.py"), "exec"), scope)
    scope["test_the_calls_streamscope_assembled"]()
