"""Write docs/conformance-cards.md: the report card of each real client in
tests/conformance_clients/, made by `streamscope conformance --json` on this machine.

    .venv/bin/python scripts/conformance_cards.py [NAME...]

Each client is run on its dialect's cases (recorded timing off: `--speed 0`); the page
states each client's packages and versions, and the date.
"""

from __future__ import annotations

import datetime
import importlib.metadata
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLIENTS = os.path.join(HERE, "tests", "conformance_clients")
PAGE = os.path.join(HERE, "docs", "conformance-cards.md")

# name, what it is, its dialect, its command after the interpreter, the packages it runs on
CARDS = [
    (
        "openai-chat-helper",
        "the openai SDK's `client.chat.completions.stream(...)`",
        "chat-completions",
        ["openai_chat.py", "helper"],
        ["openai"],
    ),
    (
        "openai-chat-create",
        "the openai SDK's `create(stream=True)`, calls keyed by index",
        "chat-completions",
        ["openai_chat.py", "create"],
        ["openai"],
    ),
    (
        "naive",
        "a hand-written SSE client that overwrites every field present",
        "chat-completions",
        ["openai_chat.py", "naive"],
        ["httpx"],
    ),
    (
        "litellm",
        "LiteLLM's `completion(stream=True)` and `stream_chunk_builder`",
        "chat-completions",
        ["litellm_chat.py"],
        ["litellm", "openai"],
    ),
    (
        "pydantic-ai",
        "a pydantic-ai agent on `OpenAIChatModel`",
        "chat-completions",
        ["pydantic_ai_chat.py"],
        ["pydantic-ai-slim", "openai"],
    ),
    (
        "openai-responses",
        "the openai SDK's `client.responses.stream(...)`",
        "openai-responses",
        ["openai_responses.py"],
        ["openai"],
    ),
    (
        "anthropic",
        "the anthropic SDK's `client.messages.stream(...)`",
        "anthropic-messages",
        ["anthropic_messages.py"],
        ["anthropic"],
    ),
    (
        "google-genai",
        "google-genai's `generate_content_stream`",
        "gemini",
        ["google_genai.py"],
        ["google-genai"],
    ),
    (
        "ollama",
        "the ollama client's `chat(stream=True)`",
        "ollama-chat",
        ["ollama_chat.py"],
        ["ollama"],
    ),
]


# A coding agent graded as it runs (scripts/agent-matrix --install claude puts it in .tools/)
CLAUDE = os.path.join(HERE, ".tools", "claude", "node_modules", ".bin", "claude")
AGENTS = [
    (
        "claude-code",
        'Claude Code\'s `claude -p "What is the weather in Paris?"`',
        "anthropic-messages",
        CLAUDE,
        ["-p", "What is the weather in Paris?"],
        {
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "ANTHROPIC_API_KEY": "sk-ant-cards",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        },
    ),
]


def agent_version(program: str) -> str:
    got = subprocess.run([program, "--version"], capture_output=True, text=True, check=False)
    return got.stdout.strip() or "unknown"


def version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def card(dialect: str, argv: list[str], out: str, env: dict[str, str] | None = None) -> dict:
    command = [sys.executable, os.path.join(CLIENTS, argv[0]), *argv[1:]] if env is None else argv
    got = subprocess.run(
        [
            sys.executable,
            "-m",
            "streamscope",
            "conformance",
            "--json",
            "--speed",
            "0",
            "--jobs",
            "2",
            "--dialect",
            dialect,
            "-o",
            out,
            "--",
            *command,
        ],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, **(env or {})},
    )
    if got.returncode not in (0, 1):
        raise SystemExit(f"{argv[0]}: conformance exited {got.returncode}: {got.stderr.strip()}")
    return json.loads(got.stdout)


def cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


# what a grade's `got` ends with after the calls it sent: the finding kinds, then its exit
_FINDINGS = re.compile(r" \([a-z]+(?:-[a-z]+)*(?:, [a-z]+(?:-[a-z]+)*)*\)(?:; then .*)?$")
WIDTH = 140


def shortened(text: str) -> str:
    """`text` in WIDTH characters: a longer one cut with an ellipsis before its finding
    kinds, which stay (a cell never reads as if the client sent the cut-off text)."""
    if len(text) <= WIDTH:
        return text
    found = _FINDINGS.search(text)
    tail = found.group() if found and len(found.group()) <= WIDTH - 40 else ""
    return text[: WIDTH - len(tail) - 1] + "…" + tail


def section(name: str, what: str, versions: str, result: dict) -> list[str]:
    (d,) = result["dialects"]
    skips = [g["got"].removeprefix("not graded: ") for g in d["grades"] if g["verdict"] == "skip"]
    graded = d["cases"] - len(skips)
    why = "; ".join(dict.fromkeys(skips))
    skipped = f" ({len(skips)} not graded: {why})" if skips else ""
    names = ", ".join(f"`{n}`" for n in d["behaves_like"]) or "none"
    lines = [
        f"## {name}",
        "",
        f"{what} ({versions}): **{d['passed']} of {graded} cases pass**{skipped}; it behaves "
        f"like {names} on {d['behaves_like_cases']} of {graded} cases.",
        "",
        "| case | sample | expected | verdict | sent back | behaves like |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for g in d["grades"]:
        n = len(g["calls"])
        expected = "refuse" if g["refuse"] else f"{n} call{'' if n == 1 else 's'} back"
        if g["verdict"] != "pass":
            got = g["got"]
        elif g["findings"]:
            got = "dropped what cannot go back: " + g["got"]
        else:
            got = "the same calls" if g["sent"] else g["got"]
        lines.append(
            f"| `{g['case']}` | `{g['sample'].split('.')[0]}` | {expected} | {g['verdict']} "
            f"| {cell(shortened(got))} | {', '.join(g['like']) or 'none'} |"
        )
    return lines + [""]


def main() -> None:
    wanted = sys.argv[1:]
    today = datetime.date.today().isoformat()
    lines = [
        "# Report cards of real clients",
        "",
        "What `streamscope conformance` says of real clients: small agents in",
        "`tests/conformance_clients/`, each on its library's own streaming path (see its",
        "README), and Claude Code as a user runs it.",
        f"Made on {today} by `scripts/conformance_cards.py` with streamscope's bundled",
        "samples, Python " + ".".join(map(str, sys.version_info[:3])) + ". How a case is graded,",
        "and what `behaves like` means: [conformance](commands/conformance.md).",
        "",
    ]
    with tempfile.TemporaryDirectory() as tmp:
        for name, what, dialect, argv, packages in CARDS:
            if wanted and name not in wanted:
                continue
            print(f"{name} ...", file=sys.stderr, flush=True)
            versions = ", ".join(f"{p} {version(p)}" for p in packages)
            lines += section(name, what, versions, card(dialect, argv, os.path.join(tmp, name)))
        for name, what, dialect, program, args, env in AGENTS:
            if (wanted and name not in wanted) or not os.access(program, os.X_OK):
                continue
            print(f"{name} ...", file=sys.stderr, flush=True)
            got = card(dialect, [program, *args], os.path.join(tmp, name), env)
            lines += section(name, what, agent_version(program), got)
    if wanted and os.path.exists(PAGE):  # the other clients' cards stay as they were
        lines = _merged(lines)
    with open(PAGE, "w", encoding="utf-8") as f:
        f.write("\n".join(lines).rstrip("\n") + "\n")


def _sections(lines: list[str]) -> tuple[list[str], dict[str, list[str]]]:
    head: list[str] = []
    out: dict[str, list[str]] = {}
    current = head
    for line in lines:
        if line.startswith("## "):
            current = out.setdefault(line[3:].strip(), [])
        current.append(line)
    return head, out


def _merged(new: list[str]) -> list[str]:
    with open(PAGE, encoding="utf-8") as f:
        _, old = _sections(f.read().splitlines())
    head, made = _sections(new)
    names = [n for n, *_ in CARDS] + [n for n, *_ in AGENTS]
    out = head
    for name in names:
        out += made.get(name) or old.get(name) or []
    return out
    print(f"wrote {os.path.relpath(PAGE, HERE)}", file=sys.stderr)


if __name__ == "__main__":
    main()
