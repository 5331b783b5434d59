"""Gemini `streamGenerateContent`: `functionCall` parts, whole or with streamed
`partialArgs`, and their `thoughtSignature`s (AI Studio and Vertex)."""

from __future__ import annotations

from urllib.parse import parse_qs

from ..base import Dialect, Terms
from .engine import STRATEGY_NAMES, GeminiEngine, plain_fragment
from .fixture import FIXTURE
from .history import IDS, history
from .kinds import KINDS
from .oracle import genai_version, parts_result
from .shape import SHAPE
from .summary import plain_summary, summarize
from .wire import (
    CLIENT_HEADERS,
    ENDPOINTS,
    claims_request,
    error_document,
    facts,
    final_event,
    response_facts,
    unserved,
)


def _framing_of(url: str) -> str:
    """`:streamGenerateContent` streams SSE with `alt=sse`, else one JSON array."""
    query = url.partition("?")[2]
    return "sse" if "sse" in parse_qs(query).get("alt", []) else "json-array"


def _claims_body(body: object) -> bool:
    """A body with `contents` and neither `messages` nor `input`."""
    return (
        isinstance(body, dict)
        and isinstance(body.get("contents"), list)
        and "messages" not in body
        and "input" not in body
    )


def _claims_event(payload: object, event: str | None) -> bool:
    if not isinstance(payload, dict) or "type" in payload or "choices" in payload:
        return False
    return "candidates" in payload or ("usageMetadata" in payload and "modelVersion" in payload)


GEMINI = Dialect(
    name="gemini",
    title="Gemini",
    engine=GeminiEngine,
    strategies=STRATEGY_NAMES,
    sdk="parts",
    plain=plain_fragment,
    plain_summary=plain_summary,
    summarize=summarize,
    history=history,
    ids=IDS,
    terms=Terms("call", "candidate", "finishReason", ("c", "call"), signatures=True),
    claims_request=claims_request,
    claims_body=_claims_body,
    claims_event=_claims_event,
    real_sdk=lambda frames, tools, response_format: parts_result(frames),
    sdk_package="google-genai",
    sdk_version=genai_version,
    fixture=FIXTURE,
    shape=SHAPE,
    version_key="google_genai_version",
    kinds=KINDS,
    client_headers=CLIENT_HEADERS,
    final_event=final_event,
    error_document=error_document,
    facts=facts,
    match_keys=("model", "contents", "systemInstruction", "tools"),
    turns=("contents", "content"),
    endpoints=ENDPOINTS,
    unserved=unserved,
    framings=("sse", "json-array"),
    framing_of=_framing_of,
    response_facts=response_facts,
    operation="generate_content",
)
