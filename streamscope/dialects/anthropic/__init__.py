"""Anthropic Messages: `content_block_start` / `input_json_delta` / `content_block_stop`."""

from __future__ import annotations

from ..base import Dialect, Terms
from .engine import STRATEGY_NAMES, AnthropicEngine, plain_fragment
from .fixture import FIXTURE
from .history import history
from .oracle import anthropic_sdk_result, anthropic_version
from .robust import EVENTS
from .shape import SHAPE
from .summary import plain_summary, summarize

# Events that only this dialect sends (`ping` and `error` are too common a name to tell).
_TELLING = EVENTS - {"ping", "error"}


def _claims_request(path: str, body: object) -> bool:
    return (
        path.endswith("/messages")
        and isinstance(body, dict)
        and isinstance(body.get("messages"), list)
    )


def _claims_event(payload: object, event: str | None) -> bool:
    if event in _TELLING:
        return True
    return isinstance(payload, dict) and payload.get("type") in _TELLING


ANTHROPIC = Dialect(
    name="anthropic-messages",
    title="Anthropic Messages",
    engine=AnthropicEngine,
    strategies=STRATEGY_NAMES,
    sdk="anthropic-sdk",
    plain=plain_fragment,
    plain_summary=plain_summary,
    summarize=summarize,
    history=history,
    terms=Terms("block", "message", "stop_reason", ("m", "blk")),
    claims_request=_claims_request,
    claims_event=_claims_event,
    real_sdk=lambda frames, tools, response_format: anthropic_sdk_result(frames),
    sdk_version=anthropic_version,
    fixture=FIXTURE,
    shape=SHAPE,
    named_events=True,
)
