"""A stand-in for the Amazon Bedrock runtime that checks every request's SigV4 signature
for its own host, as Bedrock does: a request signed for another host (the recorder's
proxy, say) is refused with 403 `InvalidSignatureException`.

It answers on 127.0.0.1, an ephemeral port, in a thread (the standard library's HTTP
server, HTTP/1.1 keep-alive, each event one chunk of a chunked body):

    with FakeBedrock() as fake:
        fake.url        # http://127.0.0.1:PORT
        fake.received   # every request, in order, with whether its signature held

The signature is computed again with botocore from the request's own X-Amz-Date, its
credential scope and signed header names, the fake's own `Host` and the known test
credentials (CREDENTIALS), and compared with the one the request carries.

Two operations, each a tool loop (`get_weather`, then a text answer once the request
sends the tool's result back), streamed as `application/vnd.amazon.eventstream`:

- `/model/{id}/converse-stream` (ConverseStream): one event a message, `:event-type` the
  event's name (messageStart, contentBlockDelta...). Its first turn opens with a text
  block that has no contentBlockStart (as Bedrock streams text), then a toolUse block.
- `/model/{id}/invoke-with-response-stream` (InvokeModelWithResponseStream, the anthropic
  SDK's AnthropicBedrock): `chunk` events whose payload is `{"bytes": base64 of an
  Anthropic Messages event}`.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote

from streamscope.framing.aws_eventstream import encode
from streamscope.http import sigv4

ACCESS_KEY = "AKIAIOSFODNN7FAKE123"  # 20 characters, key-shaped as a real one is
SECRET_KEY = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYFAKEsecret"
SESSION_TOKEN = "FwoGZXIvYXdzEFAKEsessionTOKENs3cr3t//////////wEaDFAKEtoken"
CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": ACCESS_KEY,
    "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
    "AWS_SESSION_TOKEN": SESSION_TOKEN,
}
REGION = "us-west-2"
MODEL = "anthropic.claude-sonnet-4-5-20250929-v1:0"
TOOL_ID = "tooluse_FAKE0123456789abcdef"
TOOL_INPUT = {"city": "Paris"}
LEAD = "Let me check the weather."
ANSWER = "It is 14 °C in Paris, partly cloudy."
EVENTSTREAM = "application/vnd.amazon.eventstream"


@dataclass
class Received:
    method: str
    path: str  # as it came, percent-encoded
    headers: dict[str, str]  # names in lower case
    body: bytes
    verified: bool
    why: str = ""  # what did not hold

    def json(self) -> Any:
        return json.loads(self.body)


def _frame(event: str, payload: dict) -> bytes:
    headers = [
        (":event-type", 7, event),
        (":content-type", 7, "application/json"),
        (":message-type", 7, "event"),
    ]
    return encode(headers, json.dumps(payload).encode())


def converse_events(turn: int) -> list[bytes]:
    """ConverseStream's events for turn 1 (text without a start, then a toolUse call) or
    turn 2 (the answer)."""
    start = [_frame("messageStart", {"role": "assistant"})]
    usage = {"usage": {"inputTokens": 40, "outputTokens": 12, "totalTokens": 52}}
    metadata = _frame("metadata", {**usage, "metrics": {"latencyMs": 310}})
    if turn == 1:
        half = len(LEAD) // 2
        return [
            *start,
            _frame("contentBlockDelta", {"delta": {"text": LEAD[:half]}, "contentBlockIndex": 0}),
            _frame("contentBlockDelta", {"delta": {"text": LEAD[half:]}, "contentBlockIndex": 0}),
            _frame("contentBlockStop", {"contentBlockIndex": 0}),
            _frame(
                "contentBlockStart",
                {
                    "start": {"toolUse": {"toolUseId": TOOL_ID, "name": "get_weather"}},
                    "contentBlockIndex": 1,
                },
            ),
            _frame(
                "contentBlockDelta",
                {"delta": {"toolUse": {"input": '{"city": '}}, "contentBlockIndex": 1},
            ),
            _frame(
                "contentBlockDelta",
                {"delta": {"toolUse": {"input": '"Paris"}'}}, "contentBlockIndex": 1},
            ),
            _frame("contentBlockStop", {"contentBlockIndex": 1}),
            _frame("messageStop", {"stopReason": "tool_use"}),
            metadata,
        ]
    return [
        *start,
        _frame("contentBlockDelta", {"delta": {"text": ANSWER[:10]}, "contentBlockIndex": 0}),
        _frame("contentBlockDelta", {"delta": {"text": ANSWER[10:]}, "contentBlockIndex": 0}),
        _frame("contentBlockStop", {"contentBlockIndex": 0}),
        _frame("messageStop", {"stopReason": "end_turn"}),
        metadata,
    ]


def _chunk(event: dict) -> bytes:
    data = base64.b64encode(json.dumps(event).encode()).decode()
    return _frame("chunk", {"bytes": data})


def anthropic_events(turn: int) -> list[bytes]:
    """InvokeModelWithResponseStream's chunks: Anthropic Messages events, a tool_use call
    (turn 1) or the answer (turn 2)."""
    message = {
        "id": f"msg_bdrk_FAKE{turn}",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 40, "output_tokens": 1},
    }
    events: list[dict] = [{"type": "message_start", "message": message}]
    text = LEAD if turn == 1 else ANSWER
    events += [
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}},
        {"type": "content_block_stop", "index": 0},
    ]
    if turn == 1:
        block = {"type": "tool_use", "id": TOOL_ID, "name": "get_weather", "input": {}}
        events += [
            {"type": "content_block_start", "index": 1, "content_block": block},
            {
                "type": "content_block_delta",
                "index": 1,
                "delta": {"type": "input_json_delta", "partial_json": json.dumps(TOOL_INPUT)},
            },
            {"type": "content_block_stop", "index": 1},
        ]
    stop = "tool_use" if turn == 1 else "end_turn"
    events += [
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": 12},
        },
        {"type": "message_stop"},
    ]
    return [_chunk(e) for e in events]


def _turn(body: Any) -> int:
    """2 once the conversation sends a tool's result back (either API's shape), else 1."""
    text = json.dumps(body)
    return 2 if '"toolResult"' in text or '"tool_result"' in text else 1


def _signature(
    method: str, url: str, headers: dict[str, str], body: bytes, signed: sigv4.Signature
) -> str:
    """The signature botocore makes for this request with the test credentials, at the
    request's own X-Amz-Date."""
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    names = {n: headers.get(n, "") for n in signed.signed_headers}
    request = AWSRequest(method=method, url=url, headers=names, data=body)
    request.context["timestamp"] = headers.get("x-amz-date", "")
    token = SESSION_TOKEN if "x-amz-security-token" in headers else None
    auth = SigV4Auth(Credentials(ACCESS_KEY, SECRET_KEY, token), signed.service, signed.region)
    canonical = auth.canonical_request(request)
    return auth.signature(auth.string_to_sign(request, canonical), request)


class FakeBedrock:
    """The fake Bedrock runtime (module docstring)."""

    def __init__(self) -> None:
        self.received: list[Received] = []
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:  # quiet
                pass

            def do_POST(self) -> None:  # noqa: N802 - the standard library's name
                fake._answer(self)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.host = f"127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://{self.host}"

    def __enter__(self) -> FakeBedrock:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)

    def verify(self, method: str, path: str, headers: dict[str, str], body: bytes) -> str:
        """ "" when the request's signature is the one its credentials make for this
        host; else what does not hold."""
        signed = sigv4.parse(headers.get("authorization", ""))
        if signed is None:
            return "no SigV4 Authorization header"
        if signed.access_key != ACCESS_KEY:
            return f"signed with another access key ({signed.access_key[:4]}...)"
        if "host" not in signed.signed_headers:
            return "Host is not signed"
        if headers.get("x-amz-security-token", SESSION_TOKEN) != SESSION_TOKEN:
            return "another session token"
        claimed = headers.get("x-amz-content-sha256")
        if claimed not in (None, "UNSIGNED-PAYLOAD", hashlib.sha256(body).hexdigest()):
            return "x-amz-content-sha256 is not the body's"
        own = {**headers, "host": self.host}  # its own name, whatever the request says
        expected = _signature(method, self.url + path, own, body, signed)
        if not hmac.compare_digest(expected, signed.signature):
            return "the signature does not match"
        return ""

    def _answer(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("content-length") or 0)
        body = handler.rfile.read(length)
        headers = {k.lower(): v for k, v in handler.headers.items()}
        why = self.verify("POST", handler.path, headers, body)
        with self._lock:
            self.received.append(Received("POST", handler.path, headers, body, not why, why))
        if why:
            message = (
                "The request signature we calculated does not match the signature you "
                f"provided. Check your AWS Secret Access Key and signing method. ({why})"
            )
            self._send(
                handler,
                403,
                "application/json",
                [json.dumps({"message": message}).encode()],
                {"x-amzn-ErrorType": "InvalidSignatureException"},
            )
            return
        parts = unquote(handler.path.split("?", 1)[0]).split("/")
        operation = parts[-1] if len(parts) >= 4 and parts[1] == "model" else ""
        turn = _turn(json.loads(body or b"{}"))
        if operation == "converse-stream":
            self._send(handler, 200, EVENTSTREAM, converse_events(turn))
        elif operation == "invoke-with-response-stream":
            self._send(handler, 200, EVENTSTREAM, anthropic_events(turn))
        else:
            message = json.dumps({"message": f"Unknown operation {handler.path}"}).encode()
            self._send(
                handler,
                404,
                "application/json",
                [message],
                {"x-amzn-ErrorType": "UnknownOperationException"},
            )

    @staticmethod
    def _send(
        handler: BaseHTTPRequestHandler,
        status: int,
        content_type: str,
        pieces: list[bytes],
        extra: dict[str, str] | None = None,
    ) -> None:
        handler.send_response(status)
        handler.send_header("Content-Type", content_type)
        handler.send_header("x-amzn-RequestId", "a1b2c3d4-0000-4000-8000-fakebedrock00")
        for name, value in (extra or {}).items():
            handler.send_header(name, value)
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        for piece in pieces:  # one chunk an event, flushed: streamed as Bedrock does
            handler.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            handler.wfile.flush()
        handler.wfile.write(b"0\r\n\r\n")
        handler.wfile.flush()
