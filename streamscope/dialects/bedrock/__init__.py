"""Amazon Bedrock's Converse API (`POST /model/{modelId}/converse-stream`): an AWS event
stream of `messageStart`, `contentBlockStart` / `contentBlockDelta` / `contentBlockStop`
(blocks keyed by `contentBlockIndex`; a text block has no start), `messageStop` and
`metadata`, each event a binary message named by its `:event-type` header.

wire.py holds what the faces ask the record for (the requests it claims, the final event,
the error document, a request's facts); kinds.py its own anomaly kinds.
"""

from __future__ import annotations

from ..base import Dialect, Terms
from . import wire
from .engine import STRATEGY_NAMES, BedrockEngine, plain_fragment
from .fixture import FIXTURE
from .history import IDS, history
from .kinds import KINDS
from .oracle import PACKAGE, strands_result, strands_version
from .shape import SHAPE
from .summary import plain_summary, summarize

BEDROCK = Dialect(
    name="bedrock-converse",
    title="Bedrock Converse",
    engine=BedrockEngine,
    strategies=STRATEGY_NAMES,
    sdk="strands",
    plain=plain_fragment,
    plain_summary=plain_summary,
    summarize=summarize,
    history=history,
    ids=IDS,
    terms=Terms("block", "message", "stopReason", ("m", "blk")),
    claims_request=wire.claims_request,
    claims_body=wire.claims_body,
    claims_event=wire.claims_event,
    real_sdk=lambda frames, tools, response_format: strands_result(frames),
    sdk_package=PACKAGE,
    sdk_version=strands_version,
    fixture=FIXTURE,
    shape=SHAPE,
    # the event's name is its :event-type header, which --minimal and exports keep
    named_events=True,
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
