"""Ollama's native chat (`POST /api/chat`): NDJSON lines of `ChatResponse`, each call
whole in one `message.tool_calls[]` entry, its arguments an object.

wire.py holds what the faces ask the record for (the requests it claims, the final line,
the error document, a request's facts); kinds.py its own anomaly kinds.
"""

from __future__ import annotations

from ..base import Dialect, Terms
from . import wire
from .engine import STRATEGY_NAMES, OllamaEngine, plain_fragment
from .fixture import FIXTURE
from .history import IDS, history
from .kinds import KINDS
from .oracle import ollama_result, ollama_version
from .shape import SHAPE
from .summary import plain_summary, summarize

OLLAMA = Dialect(
    name="ollama-chat",
    title="Ollama",
    engine=OllamaEngine,
    strategies=STRATEGY_NAMES,
    sdk="ollama-python",
    plain=plain_fragment,
    plain_summary=plain_summary,
    summarize=summarize,
    history=history,
    ids=IDS,
    terms=Terms("call", "message", "done_reason", ("m", "call")),
    claims_request=wire.claims_request,
    claims_body=wire.claims_body,
    claims_event=wire.claims_event,
    real_sdk=lambda frames, tools, response_format: ollama_result(frames),
    sdk_package="ollama",
    sdk_version=ollama_version,
    fixture=FIXTURE,
    shape=SHAPE,
    version_key="ollama_version",
    kinds=KINDS,
    final_event=wire.final_event,
    error_document=wire.error_document,
    facts=wire.facts,
    endpoints=wire.ENDPOINTS,
    framings=("ndjson",),
    response_facts=wire.response_facts,
)
