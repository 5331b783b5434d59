"""The core and the recording format are pure: no Textual, no network stack, no SDK."""

from __future__ import annotations

import subprocess
import sys

import pytest

PURE = [
    "streamscope.core.sse",
    "streamscope.core.frames",
    "streamscope.core.engine",
    "streamscope.core.strategies",
    "streamscope.core.robust",
    "streamscope.core.anomalies",
    "streamscope.core.repair",
    "streamscope.core.contract",
    "streamscope.core.report",
    "streamscope.core.sdk_model",
    "streamscope.recording",
    "streamscope.inputs.sniff",
    "streamscope.inputs.reads",
    "streamscope.inputs.har",
    "streamscope.inputs.source",
]
FORBIDDEN = ["textual", "httpx", "uvicorn", "openai", "rich"]


@pytest.mark.parametrize("module", PURE)
def test_pure_module_loads_nothing_heavy(module):
    code = (
        f"import sys, {module}\n"
        f"bad = [m for m in {FORBIDDEN!r} if m in sys.modules]\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"{module} pulled in {out.stdout.strip()}"
