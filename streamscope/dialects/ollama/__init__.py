"""Ollama's native chat (`POST /api/chat`): NDJSON lines of `ChatResponse`, each call
whole in one `message.tool_calls[]` entry, its arguments an object.

wire.py holds what the faces ask the record for (the requests it claims, the final line,
the error document, a request's facts); kinds.py its own anomaly kinds.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from ..base import Dialect, Terms, later
from ..versions import installed
from . import wire
from .kinds import KINDS

# The order strategies are reported in (the contract's table order).
STRATEGY_NAMES = ("robust", "ollama-python", "stop-at-done", "content-only", "by-name")


def _real_sdk(frames: list[Any], tools: Any, response_format: object) -> Any:
    from .oracle import ollama_result

    return ollama_result(frames)


OLLAMA = Dialect(
    name="ollama-chat",
    title="Ollama",
    engine=later(f"{__name__}.engine", "OllamaEngine"),
    strategies=STRATEGY_NAMES,
    sdk="ollama-python",
    plain=later(f"{__name__}.engine", "plain_fragment"),
    plain_summary=later(f"{__name__}.summary", "plain_summary"),
    summarize=later(f"{__name__}.summary", "summarize"),
    history=later(f"{__name__}.history", "history"),
    ids=later(f"{__name__}.history", "IDS"),
    terms=Terms("call", "message", "done_reason", ("m", "call")),
    claims_request=wire.claims_request,
    claims_body=wire.claims_body,
    claims_event=wire.claims_event,
    real_sdk=_real_sdk,
    sdk_package="ollama",
    sdk_version=partial(installed, "ollama"),
    fixture=later(f"{__name__}.fixture", "FIXTURE"),
    shape=later(f"{__name__}.shape", "SHAPE"),
    version_key="ollama_version",
    kinds=KINDS,
    final_event=wire.final_event,
    error_document=wire.error_document,
    facts=wire.facts,
    endpoints=wire.ENDPOINTS,
    framings=("ndjson",),
    response_facts=wire.response_facts,
)
