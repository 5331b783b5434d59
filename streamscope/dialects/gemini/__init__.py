"""Gemini `streamGenerateContent`: `functionCall` parts, whole or with streamed
`partialArgs`, and their `thoughtSignature`s (AI Studio and Vertex)."""

from __future__ import annotations

from functools import partial
from typing import Any
from urllib.parse import parse_qs

from ..base import Dialect, Terms, later
from ..versions import installed
from .kinds import KINDS
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

# A client that reads every call as robust does and keeps no thoughtSignature: the Gemini
# connector of Microsoft's Semantic Kernel (.NET) before its fix ("does not preserve
# thoughtSignature tokens from API responses", microsoft/semantic-kernel#13417) and Snow
# CLI (MayDay-wpf/snow-cli#104: the history's functionCall parts go back without it), whose
# next request Gemini refuses with 400 "Function call is missing a thought_signature".
# Robust's own calls, each without its signature (`dropped`): it differs from robust in
# that one way, and only where a call came with one.
DROPS_SIGNATURE = "drops-signature"
# The order strategies are reported in (the contract's table order).
STRATEGY_NAMES = ("robust", "parts", "index-0", "chunk-index", "needs-terminal", DROPS_SIGNATURE)


def _real_sdk(frames: list[Any], tools: Any, response_format: object) -> Any:
    from .oracle import parts_result

    return parts_result(frames)


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
    engine=later(f"{__name__}.engine", "GeminiEngine"),
    strategies=STRATEGY_NAMES,
    sdk="parts",
    plain=later(f"{__name__}.engine", "plain_fragment"),
    plain_summary=later(f"{__name__}.summary", "plain_summary"),
    summarize=later(f"{__name__}.summary", "summarize"),
    history=later(f"{__name__}.history", "history"),
    ids=later(f"{__name__}.history", "IDS"),
    terms=Terms("call", "candidate", "finishReason", ("c", "call"), signatures=True),
    claims_request=claims_request,
    claims_body=_claims_body,
    claims_event=_claims_event,
    real_sdk=_real_sdk,
    sdk_package="google-genai",
    sdk_version=partial(installed, "google-genai"),
    fixture=later(f"{__name__}.fixture", "FIXTURE"),
    shape=later(f"{__name__}.shape", "SHAPE"),
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
