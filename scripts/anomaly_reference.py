"""Write docs/anomalies.md, the anomaly reference, from the kind registries.

Every anomaly kind (the shared ones in streamscope/core/anomalies.py, each dialect's own
in streamscope/dialects/<name>/kinds.py: dialects.ANOMALY_KINDS) and contract finding
(streamscope/core/contract.py) gets an entry: its severity, meaning and why it has that
severity as registered (core.anomalies.Kind), and the dialects whose rules name it (found
in the rules' source, as tests/test_registry.py finds them). Each dialect's rule for call
ids (Dialect.ids) closes the page. tests/test_docs.py fails while the page differs from what this writes, so
a new kind cannot ship without its entry. Run it after adding a kind:

    .venv/bin/python scripts/anomaly_reference.py
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from streamscope import dialects  # noqa: E402
from streamscope.core import anomalies, contract  # noqa: E402
from streamscope.marks import label  # noqa: E402

PAGE = ROOT / "docs" / "anomalies.md"
PACKAGE = ROOT / "streamscope"
EVERY = "every dialect"
# Kinds a shared rule names on behalf of some dialects only (the scan sees the shared module).
ONLY = {
    "parallel-wrapper": ("chat", "responses"),  # the models of these APIs invent the wrapper
    "thought-signature-dropped": ("gemini",),  # only Gemini streams a thoughtSignature
}
ICON = {s: label(s) for s in (anomalies.ERROR, anomalies.WARNING, anomalies.INFO)}
AN = {anomalies.ERROR: "an error", anomalies.WARNING: "a warning", anomalies.INFO: "info"}


DIALECTS = tuple(dialects.DIALECTS.values())
PAGES = {d.name: f"{d.name}.md" for d in DIALECTS}  # the dialect's page in docs/dialects/


def _package(d: dialects.Dialect) -> str:
    """The dialect's package under streamscope/dialects/ (its record names its engine
    lazily: one is opened to ask)."""
    return type(d.engine()).__module__.split(".")[2]


# only the APIs that leave a call's id to the client file it (History.client_ids)
ONLY["tool-call-id-filled"] = tuple(_package(d) for d in DIALECTS if d.ids.client)


def _dialect_titles() -> dict[str, str]:
    """Package name under streamscope/dialects/ -> a link to the dialect's page."""
    return {_package(d): f"[{d.title}](dialects/{PAGES[d.name]})" for d in DIALECTS}


def named_by() -> dict[str, set[str]]:
    """kind -> the dialects whose rules name it (EVERY for the shared rules)."""
    titles = _dialect_titles()
    found: dict[str, set[str]] = defaultdict(set)
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).parts
        if parts[0] == "dialects" and len(parts) > 2:
            where = titles.get(parts[1])
            if where is None:
                continue
        elif parts[0] in ("core", "dialects"):
            where = EVERY
        else:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name not in ("add", "again", "discard"):
                continue
            strings = [
                a.value
                for a in node.args[:2]
                if isinstance(a, ast.Constant) and isinstance(a.value, str)
            ]
            if strings:
                found[strings[0]].add(where)
    return found


def _where(kind: str, found: dict[str, set[str]]) -> str:
    titles = _dialect_titles()
    places = {titles[p] for p in ONLY.get(kind, ())} or found.get(kind, set())
    if not places or EVERY in places:
        return "every dialect"
    order = list(titles.values())
    return ", ".join(sorted(places, key=order.index))


def _sentence(text: str) -> str:
    return text[0].upper() + text[1:] + "."


def _entry(kind: str, about: anomalies.Kind, where: str) -> list[str]:
    return [
        f"### `{kind}`",
        "",
        f"**{ICON[about.severity]}** · {where}",
        "",
        _sentence(about.meaning),
        "",
        f"*Why {AN[about.severity]}:* {_sentence(about.why)}",
        "",
    ]


def _ids() -> list[str]:
    lines = [
        "## Call ids per dialect",
        "",
        "Whose a call's id is decides whether a client that sends back another id than",
        "the stream's breaks the conversation (`tool-call-id-substituted`, an error) or",
        "fills in one the model never sent (`tool-call-id-filled`, info). Each API's",
        "documentation says:",
        "",
        "| dialect | the id is | rule |",
        "| --- | --- | --- |",
    ]
    for d in DIALECTS:
        whose = "optional, the client's to fill" if d.ids.client else "the model's"
        lines.append(
            f"| [{d.title}](dialects/{PAGES[d.name]}) | {whose} | {_sentence(d.ids.rule)} |"
        )
    return lines + [""]


def render() -> str:
    found = named_by()
    lines = [
        "# Anomaly reference",
        "",
        "<!-- Generated by scripts/anomaly_reference.py from streamscope/core/anomalies.py,",
        "     streamscope/dialects/*/kinds.py and streamscope/core/contract.py: edit the",
        "     registries, then run the script. -->",
        "",
        "Every kind streamscope reports, with its severity and what it means. A stream's",
        "anomalies are found while it is read, each at the frame where it first appears",
        "(`inspect` counts a kind that recurs); contract findings are found across a",
        "recording's exchanges, when a request sends the calls back. `--strict` makes",
        "`inspect` and `scan` exit 1 on any warning or error (not on what follows from",
        "the client closing a stream early). Each entry says which dialects'",
        "rules report it; how each dialect is read is in [Dialects](dialects/index.md).",
        "",
        "| severity | meaning |",
        "| --- | --- |",
        "| ✗ error | the result or the conversation is wrong for some client: a call is lost, wrong or unreadable, or the request that sends it back is wrong |",
        "| ! warning | a known trap some clients fall into; a correct client reads the stream right |",
        "| i info | a shape worth knowing, harmless to a correct client |",
        "",
        "Each entry says why its kind has its severity.",
        "",
    ]
    contract_intro = [
        "Found in the request that carries a stream's calls back (see",
        "[the conversation contract](dialects/index.md#the-conversation-contract)).",
        "",
    ]
    for heading, intro, registry in (
        ("Stream anomalies", [], dialects.ANOMALY_KINDS),
        ("Contract findings", contract_intro, contract.KINDS),
    ):
        lines += [f"## {heading}", "", *intro]
        for kind, about in registry.items():
            lines += _entry(kind, about, _where(kind, found))
    lines += _ids()
    return "\n".join(lines).rstrip("\n") + "\n"


def main() -> None:
    PAGE.write_text(render(), encoding="utf-8")
    print(f"wrote {PAGE.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
