"""Amazon Bedrock's Converse API (`POST /model/{modelId}/converse-stream`): an AWS event
stream of `messageStart`, `contentBlockStart` / `contentBlockDelta` / `contentBlockStop`
(blocks keyed by `contentBlockIndex`; a text block has no start), `messageStop` and
`metadata`, each event a binary message named by its `:event-type` header.

wire.py holds what the faces ask the record for (the requests it claims, the final event,
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
STRATEGY_NAMES = ("robust", "strands", "last-start", "start-only", "stop-on-end-turn")
PACKAGE = "strands-agents"  # the distribution the strands strategy stands for


def _real_sdk(frames: list[Any], tools: Any, response_format: object) -> Any:
    from .oracle import strands_result

    return strands_result(frames)


BEDROCK = Dialect(
    name="bedrock-converse",
    title="Bedrock Converse",
    engine=later(f"{__name__}.engine", "BedrockEngine"),
    strategies=STRATEGY_NAMES,
    sdk="strands",
    plain=later(f"{__name__}.engine", "plain_fragment"),
    plain_summary=later(f"{__name__}.summary", "plain_summary"),
    summarize=later(f"{__name__}.summary", "summarize"),
    history=later(f"{__name__}.history", "history"),
    ids=later(f"{__name__}.history", "IDS"),
    terms=Terms("block", "message", "stopReason", ("m", "blk")),
    claims_request=wire.claims_request,
    claims_body=wire.claims_body,
    claims_event=wire.claims_event,
    real_sdk=_real_sdk,
    sdk_package=PACKAGE,
    sdk_version=partial(installed, PACKAGE),
    fixture=later(f"{__name__}.fixture", "FIXTURE"),
    shape=later(f"{__name__}.shape", "SHAPE"),
    # the event's name is its :event-type header, which --minimal and exports keep
    named_events=True,
    chunk_key=wire.chunk_key,
    version_key="strands_agents_version",
    kinds=KINDS,
    final_event=wire.final_event,
    error_document=wire.error_document,
    error_headers=wire.error_headers,
    facts=wire.facts,
    # (toolConfig is left to serve's owner: its help names every key compared)
    match_keys=("model", "system", "messages"),
    endpoints=wire.ENDPOINTS,
    noun="Bedrock Converse",
    framings=("aws-eventstream",),
    response_facts=wire.response_facts,
)
