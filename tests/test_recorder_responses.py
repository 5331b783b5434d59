"""The recorder on the OpenAI Responses API, as a user meets it: `streamscope record --
python agent.py` with an agent on the real openai client's `responses.stream(...)`, and a
client that leaves at its stream's final event."""

from __future__ import annotations

import hashlib
import json
import sys
import time

import openai
import pytest

from streamscope.record.proxy import ProxyServer, Upstream
from streamscope.recording import RecordingWriter, iter_records
from streamscope.recording.format import REDACTED, End, Request

from .responses_stream import ANSWER, ARGUMENTS, CALL_ID, MODEL, OUTPUT, QUESTION, TOOLS
from .test_export import only_openai_and_pytest
from .test_recorder import ends, exchange_bytes, streamscope
from .test_tui import anyio_backend  # noqa: F401  (the replay test runs on asyncio)
from .upstream import Upstream as StandIn

pytestmark = pytest.mark.slow  # the fast run (-m 'not slow') leaves it out

SECRET = "sk-proj-responses-secret-5e2"

# A small agent, as a user writes one: the real openai client (its key and base URL from
# OPENAI_API_KEY and OPENAI_BASE_URL, as streamscope set it), the Responses API streaming
# a function call; the tool is run and its output sent back in a second request, after
# `previous_response_id` or beside the call item in `input`. It prints what it did and
# the sha256 of each response body as its HTTP client read it.
AGENT = f"""
import hashlib, json, sys

import httpx2, openai

MODEL, QUESTION, TOOLS, OUTPUT = {MODEL!r}, {QUESTION!r}, {TOOLS!r}, {OUTPUT!r}
digests = []


class Tap(httpx2.SyncByteStream):
    def __init__(self, inner):
        self.inner, self.sha = inner, hashlib.sha256()
        digests.append(self.sha)

    def __iter__(self):
        for data in self.inner:
            self.sha.update(data)
            yield data

    def close(self):
        self.inner.close()


class Hashing(httpx2.HTTPTransport):
    def handle_request(self, request):
        response = super().handle_request(request)
        response.stream = Tap(response.stream)
        return response


def get_weather(city, unit):
    return OUTPUT


client = openai.OpenAI(max_retries=0, http_client=httpx2.Client(transport=Hashing()))
with client.responses.stream(model=MODEL, input=QUESTION, tools=TOOLS) as stream:
    first = stream.get_final_response()
call = next(item for item in first.output if item.type == "function_call")
output = get_weather(**json.loads(call.arguments))
result = {{"type": "function_call_output", "call_id": call.call_id, "output": output}}
answer = ""
if sys.argv[1] == "previous":
    with client.responses.stream(
        model=MODEL, input=[result], tools=TOOLS, previous_response_id=first.id
    ) as stream:
        answer = stream.get_final_response().output_text
else:
    item = {{"type": "function_call", "id": call.id, "call_id": call.call_id,
            "name": call.name, "arguments": call.arguments}}
    events = client.responses.create(
        model=MODEL, input=[*QUESTION, item, result], tools=TOOLS, stream=True
    )
    for event in events:
        if event.type == "response.output_text.delta":
            answer += event.delta
print(json.dumps({{
    "call": {{"call_id": call.call_id, "name": call.name, "arguments": call.arguments}},
    "status": first.status,
    "answer": answer,
    "sha256": [d.hexdigest() for d in digests],
}}))
"""


def requests(path) -> list[Request]:
    return [r for _, r in iter_records(path) if isinstance(r, Request)]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory, upstream):
    """`streamscope record -- python agent.py SECOND`, run once a module for each second
    request (the end-to-end test and the replay read the same run): SECOND -> (the
    recording, the subprocess, what the upstream served, the paths it was asked and the
    headers it got, from this run only)."""
    runs: dict[str, tuple] = {}

    def record(second: str) -> tuple:
        if second not in runs:
            folder = tmp_path_factory.mktemp(f"responses-{second}")
            (folder / "agent.py").write_text(AGENT)
            out = folder / "run.jsonl"
            seen = len(upstream.served), len(upstream.paths), len(upstream.headers)
            done = streamscope(
                "record",
                "--upstream",
                upstream.url,
                "-o",
                str(out),
                "--",
                sys.executable,
                "agent.py",
                second,
                env={"OPENAI_API_KEY": SECRET},
                cwd=folder,
            )
            runs[second] = (
                out,
                done,
                upstream.served[seen[0] :],
                upstream.paths[seen[1] :],
                upstream.headers[seen[2] :],
            )
        return runs[second]

    return record


@pytest.mark.parametrize("second", ["previous", "items"])
def test_record_a_responses_agent_end_to_end(tmp_path, recorded, upstream, second):
    out, done, served_now, paths, headers_sent = recorded(second)
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout)  # the agent's stdout is its own
    assert said["call"]["call_id"] == CALL_ID and said["call"]["name"] == "get_weather"
    assert json.loads(said["call"]["arguments"]) == ARGUMENTS
    assert said["status"] == "completed" and said["answer"] == ANSWER
    assert "OPENAI_BASE_URL=http://127.0.0.1:" in done.stderr and "2 exchanges" in done.stderr

    first, second_request = requests(out)
    assert first.url == second_request.url == upstream.url + "/responses"
    assert paths[-2:] == ["/v1/responses", "/v1/responses"]
    sent_back = second_request.json_body()["input"][-1]
    assert sent_back == {"type": "function_call_output", "call_id": CALL_ID, "output": OUTPUT}
    # every byte the agent read is the recording's, and the upstream's
    recorded = [hashlib.sha256(exchange_bytes(out, ex)).hexdigest() for ex in (1, 2)]
    served = [digest for model, digest, _ in served_now if model == MODEL]
    assert recorded == said["sha256"] == served
    assert [e.reason for e in ends(out).values()] == ["complete", "complete"]
    # the key never reaches the file, and still reaches the upstream
    assert SECRET not in out.read_text()
    headers = {k.lower(): v for k, v in first.headers}
    assert headers["authorization"] == f"Bearer {REDACTED}"
    assert headers_sent[-1]["authorization"] == f"Bearer {SECRET}"
    # what the user does next: inspect it, and export the stream as a regression test
    doc = json.loads(streamscope("inspect", "--json", str(out)).stdout)
    assert [s["dialect"] for s in doc["streams"]] == ["openai-responses"] * 2
    (call,) = doc["streams"][0]["tool_calls"]
    assert call["id"] == CALL_ID and call["item_id"] and json.loads(call["arguments"]) == ARGUMENTS
    assert doc["contract"] == []  # the output answers the call, either way
    module = tmp_path / "test_weather.py"
    made = streamscope("export", str(out), "--format", "pytest", "-o", str(module))
    assert made.returncode == 0, made.stderr
    assert "client.responses.create(" in module.read_text() and "NOTE" not in module.read_text()
    ran = only_openai_and_pytest(module)
    assert ran.returncode == 0 and "1 passed" in ran.stdout, ran.stdout + ran.stderr


@pytest.mark.anyio
async def test_the_recorded_agent_replays_in_its_own_words(recorded):
    from streamscope.tui.app import ReplayApp
    from streamscope.tui.widgets import CallTable

    from .test_tui import settle, text

    out, done, *_ = recorded("items")  # the end-to-end test's run
    assert done.returncode == 0, done.stderr
    app = ReplayApp(str(out), exchange=1)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("end")
        await pilot.pause()
        table = text(app.screen.query_one("#robust", CallTable))
        assert "call_id" in table and "get_weather" in table
        # (the two ids fold to leave the arguments room: read the columns' pieces together)
        at = table.splitlines()[1].index('"call_')
        assert "".join(line[at:].split(" ")[0] for line in table.splitlines()[1:3]).startswith(
            f'"{CALL_ID}"'
        )


@pytest.fixture(scope="module")
def holding_proxy(tmp_path_factory):
    """A proxy in front of a provider that holds each body open for 0.5 s after the final
    event, as a gateway may: a client that leaves meanwhile leaves a stream it had whole.
    The final event waits 0.5 s too, so that a client that leaves before it (the event
    before, on a loaded machine) is gone before it comes."""
    path = tmp_path_factory.mktemp("responses") / "leave.jsonl"
    with (
        StandIn(pace=0.01, tail_pause=0.5, last_pause=0.5) as up,
        RecordingWriter(path) as writer,
    ):
        server = ProxyServer(Upstream.parse(up.url), writer, timeout=30)
        server.start()
        server.path = path
        yield server
        server.stop()


def end_of(path, exchange: int, wait: float = 5.0) -> End:
    """The exchange's end line, once the proxy has noticed how it ended."""
    deadline = time.monotonic() + wait
    while exchange not in (found := ends(path)) and time.monotonic() < deadline:
        time.sleep(0.01)
    return found[exchange]


@pytest.mark.parametrize(
    "model, leave_at, reason",
    [
        (MODEL, "response.completed", "complete"),
        ("incomplete", "response.incomplete", "complete"),
        ("failed", "response.failed", "complete"),
        (MODEL, "response.output_item.done", "client-closed"),  # the final event still to come
    ],
)
def test_a_client_leaving_after_the_final_event_ended_a_complete_stream(
    holding_proxy, model, leave_at, reason
):
    exchange = holding_proxy.app.exchanges + 1
    client = openai.OpenAI(api_key=SECRET, base_url=holding_proxy.base_url, max_retries=0)
    with client:
        events = client.responses.create(model=model, input=QUESTION, tools=TOOLS, stream=True)
        with events:
            for event in events:
                if event.type == leave_at:
                    break  # leaving the `with` closes the response
    assert end_of(holding_proxy.path, exchange).reason == reason
