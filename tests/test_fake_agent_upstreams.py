"""The fakes the coding-agent tests run opencode and pi against stream as the APIs do: the
providers' own SDKs assemble their answers (the `bash` call with `echo hello`, then the
answer once its result comes back; a plain text to a request with no tools)."""

from __future__ import annotations

import pytest

from .fakes.anthropic_messages import TITLE, FakeMessages
from .fakes.responses_ws import ANSWER, FakeResponses

pytestmark = pytest.mark.slow

# opencode's bash (pi's has no description, and neither gets one)
BASH = {
    "type": "object",
    "properties": {
        "command": {"type": "string"},
        "description": {"type": "string"},
        "timeout": {"type": "integer"},
    },
    "required": ["command"],
}
ASK = [{"role": "user", "content": "run echo hello"}]


def test_the_messages_fake_streams_a_bash_call_then_the_answer():
    anthropic = pytest.importorskip("anthropic")
    tools = [{"name": "bash", "description": "Run a command", "input_schema": BASH}]
    with FakeMessages() as fake:
        client = anthropic.Anthropic(base_url=fake.base_url, api_key="sk-fake", max_retries=0)
        kwargs = {"model": "claude-sonnet-4-5", "max_tokens": 100, "tools": tools}
        with client.messages.stream(messages=ASK, **kwargs) as stream:
            first = stream.get_final_message()
        (call,) = first.content
        assert (first.stop_reason, call.type, call.name) == ("tool_use", "tool_use", "bash")
        assert call.input == {"command": "echo hello", "description": "Prints hello"}
        result = {"type": "tool_result", "tool_use_id": call.id, "content": "hello\n"}
        history = [*ASK, {"role": "assistant", "content": first.content}]
        history.append({"role": "user", "content": [result]})
        with client.messages.stream(messages=history, **kwargs) as stream:
            second = stream.get_final_message()
        assert [b.text for b in second.content] == [ANSWER]
        assert second.stop_reason == "end_turn"
        # a side request with no tools, not streamed: a text, as one JSON message
        titled = client.messages.create(model="claude-haiku-4-5", max_tokens=20, messages=ASK)
        assert [b.text for b in titled.content] == [TITLE]
    assert [r.path for r in fake.received()] == ["/v1/messages"] * 3


def test_the_responses_fake_calls_a_bash_tool_with_its_arguments():
    openai = pytest.importorskip("openai")
    tools = [{"type": "function", "name": "bash", "parameters": BASH, "strict": False}]
    with FakeResponses(websocket=False) as fake:
        client = openai.OpenAI(base_url=fake.base_url, api_key="sk-fake", max_retries=0)
        with client.responses.stream(model="gpt-5.1", input=ASK, tools=tools) as stream:
            first = stream.get_final_response()
        (call,) = first.output
        assert (call.type, call.name) == ("function_call", "bash")
        assert call.arguments == '{"command": "echo hello", "description": "Prints hello"}'
        back = [*ASK, {"type": "function_call", "call_id": call.call_id, "name": "bash"}]
        back[-1]["arguments"] = call.arguments
        back.append({"type": "function_call_output", "call_id": call.call_id, "output": "hi"})
        with client.responses.stream(model="gpt-5.1", input=back, tools=tools) as stream:
            assert stream.get_final_response().output_text == ANSWER
        with client.responses.stream(model="gpt-5.4-nano", input=ASK) as stream:
            assert stream.get_final_response().output_text == TITLE
