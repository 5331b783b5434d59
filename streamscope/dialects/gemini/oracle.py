"""The real `google-genai` client as the `parts` strategy: oracle and fallback.

`run_real_genai` serves the frames, re-encoded as SSE, to a real `genai.Client` through
an httpx2 MockTransport and runs `client.models.generate_content_stream(...)` the way a
user does, collecting every chunk's `function_calls`. Its answer is the ground truth
`sdk_model.PartsEmulation` must reproduce; `parts_result` runs it only where the
emulation declines a shape.

`google-genai` (and httpx2) are imported lazily: streamscope must import without them.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterable
from typing import Any

from ...core.calls import Call, StrategyError, Unmodeled
from ...core.frames import Frame
from ..typed import FrameBody, emulated_or_real
from .sdk_model import PartsEmulation
from .strategies import args_text

NOT_INSTALLED = (
    "the google-genai package is not installed, and this stream has a shape streamscope's "
    "emulation of it does not cover: install google-genai to see what its users collect"
)


def genai_version() -> str | None:
    """The installed google-genai version: what `parts` stands for (no import)."""
    from ..versions import installed

    return installed("google-genai")


def _genai_http() -> str:
    """google-genai takes a client of either package: httpx2 where it is installed."""
    import importlib.util

    return "httpx2" if importlib.util.find_spec("httpx2") else "httpx"


def run_real_genai(frames: Iterable[Frame]) -> list[Call] | StrategyError:
    """Every `function_calls` entry of every chunk the installed google-genai yields, in
    order; an exception is reported at the frame being consumed."""
    from google import genai
    from google.genai import types

    from ..sdk_dict import reader

    as_dict = reader("google.genai")
    frames = list(frames)
    body = FrameBody(frames, lambda number: None)
    client = genai.Client(
        api_key="streamscope",
        http_options=types.HttpOptions(
            base_url="http://streamscope.invalid", httpx_client=body.client(_genai_http())
        ),
    )
    out: list[Call] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            for chunk in client.models.generate_content_stream(model="streamscope", contents="-"):
                signatures = _signatures(chunk)
                for k, fc in enumerate(_function_calls(chunk)):
                    data = as_dict(fc)  # its JSON-mode dump, each key as sent
                    args = _held_args(fc.args) or args_text(data)
                    call = Call(0, len(out), fc.id or "", "functionCall", fc.name or "", args)
                    call.first_frame = call.last_frame = body.current
                    call.signature = signatures[k] if k < len(signatures) else None
                    out.append(call)
        except Exception as exc:
            return StrategyError.from_exception(exc, body.current)
    return out


def _held_args(args: object) -> str | None:
    """`json.dumps(fc.args)`, compact, for args holding NaN or an infinity (the SDK's
    json.loads reads them; its JSON-mode dump writes null): NaN, Infinity, -Infinity, as
    its users' json.dumps writes them. None for any other args (args_text writes those)."""
    try:
        json.dumps(args, allow_nan=False)
    except ValueError:
        return json.dumps(args, ensure_ascii=False, separators=(",", ":"))
    except RecursionError:  # (nested past what Python writes: args_text says so)
        return None
    return None


def _signatures(chunk: object) -> list[object]:
    """The thoughtSignature of each functionCall part of the chunk's first candidate, as
    the SDK holds it (bytes) spelled in base64 again (None: the part has none): the part
    a user sends back whole."""
    import base64

    try:
        parts = chunk.candidates[0].content.parts or []  # type: ignore[attr-defined]
    except (AttributeError, IndexError, TypeError):
        return []
    out: list[object] = []
    for part in parts:
        if getattr(part, "function_call", None) is None:
            continue
        sig = getattr(part, "thought_signature", None)
        out.append(base64.b64encode(sig).decode() if isinstance(sig, bytes) else sig)
    return out


def _function_calls(chunk: object) -> list[Any]:
    import logging

    logger = logging.getLogger("google_genai.types")
    level, logger.level = logger.level, logging.ERROR  # (its multi-candidate warning)
    try:
        return getattr(chunk, "function_calls", None) or []
    finally:
        logger.level = level


def parts_result(frames: Iterable[Frame]) -> list[Call] | StrategyError | Unmodeled:
    """The `parts` strategy's answer: the emulation, or the real client where it can't."""
    return emulated_or_real(
        list(frames), PartsEmulation, genai_version, NOT_INSTALLED, run_real_genai
    )
