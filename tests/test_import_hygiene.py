"""The core, the recording format and the input layer are pure: no Textual, no network
stack, no SDK. The analysis driver reaches the real openai class only when it must; the
anthropic oracle imports the real anthropic class the same way, only when it runs it."""

from __future__ import annotations

import subprocess
import sys

import pytest

PURE = [
    "streamscope.framing.sse",
    "streamscope.core.frames",
    "streamscope.dialects.chat.engine",
    "streamscope.dialects.chat.strategies",
    "streamscope.dialects.chat.robust",
    "streamscope.core.anomalies",
    "streamscope.core.repair",
    "streamscope.core.contract",
    "streamscope.core.report",
    "streamscope.dialects.chat.sdk_model",
    "streamscope.dialects.anthropic.sdk_model",
    "streamscope.dialects.anthropic.partial_json",
    "streamscope.dialects.anthropic.oracle",
    "streamscope.dialects.anthropic.engine",
    "streamscope.dialects.chat.oracle",
    "streamscope.dialects.responses.sdk_model",
    "streamscope.dialects.responses.oracle",
    "streamscope.dialects",
    "streamscope.core.history",
    "streamscope.recording",
    "streamscope.inputs",
    "streamscope.inputs.sniff",
    "streamscope.inputs.reads",
    "streamscope.inputs.har",
    "streamscope.inputs.encoding",
    "streamscope.inputs.source",
    "streamscope.analysis.driver",
    "streamscope.text",
]
FORBIDDEN = [
    "textual",
    "httpx",
    "httpx2",
    "uvicorn",
    "openai",
    "rich",
    "anthropic",
    "jiter",
    "pydantic",
    "google.genai",
]


@pytest.mark.parametrize("module", PURE)
def test_pure_module_loads_nothing_heavy(module):
    code = (
        f"import sys, {module}\n"
        f"bad = [m for m in {FORBIDDEN!r} if m in sys.modules]\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"{module} pulled in {out.stdout.strip()}"
