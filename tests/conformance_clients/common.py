"""What every conformance client does alike: its modes, a dummy key, running a tool, its
one line of output. Each client imports it as a sibling (`import common`), as a script
run by path has its own folder first on sys.path."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import Any

QUESTION = "What's the weather in Paris, and what time is it there?"
# The tools each client declares: the served stream may call others (read_file,
# convert_currency, a custom tool), and the client runs whatever it is asked to.
FUNCTIONS: list[dict[str, Any]] = [
    {
        "name": name,
        "description": description,
        "parameters": {
            "type": "object",
            "properties": {prop: {"type": "string"}},
            "required": [prop],
        },
    }
    for name, description, prop in (
        ("get_weather", "Current weather for a city", "city"),
        ("get_local_time", "Local time in a timezone", "timezone"),
    )
]


def dummy_key(*names: str) -> None:
    """The SDK wants a key; a served sample asks for none (a real one is kept)."""
    for name in names:
        os.environ.setdefault(name, "sk-streamscope-conformance")


def parse(arguments: Any) -> Any:
    """The arguments as agents read them: a string through json.loads, which raises on
    arguments that do not parse (the process then exits non-zero with the traceback);
    anything else (an SDK's dict) as it is."""
    return json.loads(arguments) if isinstance(arguments, str) else arguments


def result(name: str, args: Any) -> str:
    """The tool's result: whatever it was called, by any name."""
    return json.dumps({"tool": name, "args": args, "result": "ok"})


def run(modes: dict[str, Callable[[], dict[str, Any]]]) -> None:
    """Run the mode named by argv[1] (the first is the default) and print its one JSON
    line; an unknown mode: one line on stderr naming the modes, exit 2."""
    name = os.path.basename(sys.argv[0])
    mode = sys.argv[1] if len(sys.argv) > 1 else next(iter(modes))
    if mode not in modes or len(sys.argv) > 2:
        known = ", ".join(modes)
        print(f"{name}: unknown mode {' '.join(sys.argv[1:])!r} (modes: {known})", file=sys.stderr)
        sys.exit(2)
    runs = os.environ.get("STREAMSCOPE_CONFORMANCE_CASES")
    if runs is None:
        print(json.dumps(modes[mode](), default=str))
        return
    # `streamscope conformance --loop`: one conversation per case, as an eval harness
    # runs them: a conversation that raises is reported and the next one begins
    for _ in range(int(runs)):
        try:
            print(json.dumps(modes[mode](), default=str), flush=True)
        except Exception as e:  # noqa: BLE001 - each conversation on its own
            print(f"{type(e).__name__}: {e}", file=sys.stderr, flush=True)
