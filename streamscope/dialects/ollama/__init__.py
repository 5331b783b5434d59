"""Ollama's native chat (`POST /api/chat`): NDJSON lines of `ChatResponse`, each call
whole in one `message.tool_calls[]` entry, its arguments an object.

wire.py holds what the faces will ask the record for (the requests it claims, the final
line, the error document, a request's facts, its anomaly kinds) as plain functions.
"""

from __future__ import annotations

from ...core.anomalies import KINDS
from ..base import Dialect, Terms
from . import wire
from .engine import STRATEGY_NAMES, OllamaEngine, plain_fragment
from .fixture import FIXTURE
from .history import history
from .oracle import ollama_result, ollama_version
from .shape import SHAPE
from .summary import plain_summary, summarize

# Until the core builds its registry from the dialects' own kinds, they join it here
# (each has its entry in the anomaly reference).
KINDS.update((k, v) for k, v in wire.KINDS.items() if k not in KINDS)

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
)
