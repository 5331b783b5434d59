"""`export --format html`: one self-contained page (report.html, report.css and
report.js beside this module, shipped in the package) holding the report's data as JSON.

Nothing in it is fetched: the Content-Security-Policy allows no source but this page's
own style and script (by their hashes), so no recorded value could load or run
anything even if it got into the markup; and none does: the data sits in a
`<script type="application/json">` block with every `<`, `>` and `&` written as a
\\u escape (a `</script>` in the data cannot close the block), and the script writes
every value as text (textContent), never as HTML.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import sys
from importlib.resources import files
from typing import Any

from .report import Report

_ESCAPES = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}


def _asset(name: str) -> str:
    return files(__package__).joinpath(name).read_text("utf-8")


def _plain(value: Any) -> Any:
    """A value JSON.parse reads: a float JSON has no literal for (inf, nan) as text."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def embedded(doc: object) -> str:
    """`doc` as JSON safe inside a <script> block: ASCII, `<`, `>`, `&` as \\u escapes."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 4 * 1024))  # values parsed from a stream nest deep
    try:
        text = json.dumps(_plain(doc), ensure_ascii=True, allow_nan=False, separators=(",", ":"))
    finally:
        sys.setrecursionlimit(limit)
    for raw, escaped in _ESCAPES.items():
        text = text.replace(raw, escaped)
    return text


def _hash(source: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(source.encode()).digest()).decode() + "'"


def compact(states: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A stream's frames as each one's change from the one before (report.js rebuilds
    the tables): a table left out is as it was; of one that changed, its calls whole
    when it raised or stopped raising, else `n` (how many) and `set` (each changed
    call's index and changed fields; arguments that grew: `arguments+`, what they
    gained); the text and reasoning likewise (`text+`, `reasoning+`). The page's size
    grows with what the stream changes, not with frames x calls."""
    out: list[dict[str, Any]] = []
    before: dict[str, Any] = {}
    said = {"text": "", "reasoning": ""}
    for st in states:
        tables = st.pop("tables")
        changes: dict[str, Any] = {}
        for name, t in tables.items():
            delta = _table_change(before.get(name), t)
            if delta:
                changes[name] = delta
        before = tables
        st["changes"] = changes
        for key in ("text", "reasoning"):
            now = st.pop(key, "")
            if now != said[key]:
                grown = now.startswith(said[key]) and said[key] != ""
                st[key + "+" if grown else key] = now[len(said[key]) :] if grown else now
            said[key] = now
        out.append(st)
    return out


def _table_change(old: dict[str, Any] | None, new: dict[str, Any]) -> dict[str, Any]:
    if old is None or old["calls"] is None or new["calls"] is None:
        return new if old != new else {}
    delta = {k: new[k] for k in ("error", "differs", "more") if new[k] != old[k]}
    calls, was = new["calls"], old["calls"]
    if len(calls) != len(was):
        delta["n"] = len(calls)
    changed = []
    for k, cell in enumerate(calls):
        prior = was[k] if k < len(was) else {}
        fields = {f: v for f, v in cell.items() if f not in prior or prior[f] != v}
        args, had = fields.get("arguments"), prior.get("arguments")
        if isinstance(args, str) and isinstance(had, str) and had and args.startswith(had):
            del fields["arguments"]
            fields["arguments+"] = args[len(had) :]
        if fields:
            changed.append([k, fields])
    if changed:
        delta["set"] = changed
    return delta


def render(report: Report, frame: int | None = None) -> str:
    from .report_md import pick

    doc = report.to_json()
    for s in doc["streams"]:
        s["states"] = compact(s["states"])
    # the page opens where the Markdown report points: the first stream with a finding
    # (else the first holding a call), at `frame` (default: its first finding's); the
    # URL's #exchange=N&response=R&frame=F wins
    stream, _ = pick(report, frame)
    doc["open"] = {"stream": report.streams.index(stream), "frame": frame}
    style, script = _asset("report.css"), _asset("report.js")
    # no source at all but this page's own style and script: no fetch, no image, no
    # font, no form, no frame, no inline handler, no other script
    csp = (
        "default-src 'none'; "
        f"style-src {_hash(style)}; script-src {_hash(script)}; "
        "img-src 'none'; font-src 'none'; connect-src 'none'; media-src 'none'; "
        "object-src 'none'; frame-src 'none'; base-uri 'none'; form-action 'none'"
    )
    page = _asset("report.html")
    for mark, text in (("/*CSP*/", csp), ("/*STYLE*/", style), ("/*SCRIPT*/", script)):
        page = page.replace(mark, text, 1)
    return page.replace("/*DATA*/", embedded(doc), 1)
