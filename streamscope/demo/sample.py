"""What `streamscope demo` hands its agent: the served sample's first request, which each
agent reads as its own API has it (its question, tools and instructions)."""

from __future__ import annotations

import json
import os
from typing import Any


def request() -> dict[str, Any]:
    """The first request's JSON body (AGENT_REQUEST; {} when none was given)."""
    body = json.loads(os.environ.get("AGENT_REQUEST") or "{}")
    return body if isinstance(body, dict) else {}


def url() -> str:
    """The first request's URL (AGENT_URL; "" when none was given)."""
    return os.environ.get("AGENT_URL", "")


def tools(body: dict[str, Any]) -> list[Any]:
    """The request's `tools`, where it declares any ([] where it does not)."""
    got = body.get("tools")
    return got if isinstance(got, list) else []
