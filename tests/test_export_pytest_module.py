"""`export --format pytest` of a Chat Completions stream: the module it writes runs, in
this process, as its story says it does."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from streamscope.cli import main

HEAD = '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":'


def _chunk(delta: str, finish: str = "null") -> str:
    return HEAD + '[{"index":0,"delta":{' + delta + '},"finish_reason":' + finish + "}]}"


def _opener(index: int = 0, extra: str = "") -> str:
    return _chunk(
        extra + f'"tool_calls":[{{"index":{index},"id":"call_1","type":"function",'
        '"function":{"name":"f","arguments":""}}]'
    )


def _args(index: int = 0) -> str:
    return _chunk(f'"tool_calls":[{{"index":{index},"function":{{"arguments":"{{}}"}}}}]')


def _module(tmp_path, *chunks: str) -> tuple[str, dict]:
    """The module exported from an SSE body of `chunks`, and its names once run."""
    source, out = tmp_path / "stream.sse", tmp_path / "test_stream.py"
    body = "".join(f"data: {c}\n\n" for c in chunks) + "data: [DONE]\n\n"
    source.write_text(body)
    result = CliRunner().invoke(main, ["export", str(source), "--format", "pytest", "-o", str(out)])
    assert result.exit_code == 0, result.output
    text = out.read_text()
    scope: dict = {"__name__": "exported"}
    exec(compile(text, str(out), "exec"), scope)
    return text, scope


def test_a_key_holding_a_lone_surrogate_is_replayed_as_sent(tmp_path):
    # pydantic cannot write such a key: the chunk's to_dict() raises UnicodeEncodeError
    first = _opener(extra='"\\ud800x":1,')
    _, scope = _module(tmp_path, first, _args(), _chunk("", '"tool_calls"'))
    assert scope["FRAMES"][0] == first  # the escape as the provider sent it
    scope["test_the_calls_streamscope_assembled"]()  # green: no UnicodeEncodeError


@pytest.mark.parametrize("index", [1_000_000, 2**40])
def test_a_big_index_is_said_to_raise_in_the_stream_helper_alone(tmp_path, index):
    # ChatCompletionStreamState raises IndexError on it; create(stream=True), which the
    # module reads through, does not: the story must not promise a red test
    text, scope = _module(tmp_path, _opener(index), _args(index), _chunk("", '"tool_calls"'))
    story = " ".join(text.split('"""')[1].split())
    assert "client.chat.completions.stream() (inspect's openai-sdk), raises" in story
    assert "IndexError" in story and "fails there" not in story
    scope["test_the_calls_streamscope_assembled"]()  # green, as the story says
