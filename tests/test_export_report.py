"""`export --format md|html`: the report to share. The Markdown is a GFM table whose
cells hold recorded values as text; the HTML page, opened in a real headless Chromium
(tests/browser.py), shows the alibaba sample's `id: ""` frame with the overwrite marked,
moves its slider (the DevTools protocol), and runs nothing a hostile recording holds; --redact-content leaves
none of the conversation's text; no secret a recording would mask gets in."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator

import pytest
from click.testing import CliRunner

from streamscope.cli import main
from streamscope.export import report as report_module
from streamscope.export import report_md
from streamscope.export.report import _redact_value, build, shape
from streamscope.recording import RecordingWriter
from streamscope.recording.private import write_private_whole

from .browser import CHROMIUM, Page, dump_dom
from .test_export_secrets import har, leaked

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "recordings")
ALIBABA = os.path.join(ROOT, "alibaba-empty-id.jsonl")
# the alibaba sample's conversation: its messages, its tool's description, its
# arguments, the tool's result (exchange 2's request) and the answer (exchange 2's stream)
SAMPLE_TEXTS = [
    "You are a helpful assistant",
    "How is the weather in Hangzhou today?",
    "Current weather at a location",
    "Hangzhou",
    "Zhejiang",
    "celsius",
    "overcast",
    "N 12 km/h",
    "light north wind",
]
# what a hostile recording holds in every field a report shows
PAYLOADS = [
    "</script><script>document.documentElement.setAttribute('data-pwned','script')</script>",
    "<img src=x onerror=\"document.documentElement.setAttribute('data-pwned','img')\">",
    "javascript:document.documentElement.setAttribute('data-pwned','url')",
    "a|b`c`**d** [x](javascript:alert(1)) \x1b[31m\x00\x07\u2028 <!-- -->",
]
HOSTILE = "".join(PAYLOADS)

needs_chromium = pytest.mark.skipif(
    CHROMIUM is None,
    reason="no chromium: the report's browser tests need Debian's chromium "
    "(apt-get install chromium; scripts/check installs it when run as root)",
)


def run(*args: str) -> tuple[int, str]:
    done = CliRunner().invoke(main, ["export", *args])
    return done.exit_code, done.output


def export_to(path, *args: str) -> str:
    code, said = run(*args, "-o", str(path))
    assert code == 0, said
    assert os.stat(path).st_mode & 0o777 == 0o600  # a report holds a conversation too
    return path.read_text(encoding="utf-8")


def hostile_recording(path) -> str:
    """One Chat Completions stream whose url, headers, request, call id, name, arguments
    and text hold the payloads; its second chunk overwrites the id, so the call table
    marks a cell too."""
    call = {"index": 0, "id": HOSTILE, "type": "function"}
    call["function"] = {"name": HOSTILE, "arguments": json.dumps({HOSTILE: HOSTILE})[:40]}
    rest = {"index": 0, "id": "", "function": {"arguments": json.dumps({HOSTILE: HOSTILE})[40:]}}
    base = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": HOSTILE}

    def chunk(delta: dict, finish: str | None = None) -> bytes:
        doc = {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        return b"data: " + json.dumps(doc).encode() + b"\n\n"

    body = {"model": HOSTILE, "stream": True, "messages": [{"role": "user", "content": HOSTILE}]}
    with RecordingWriter(path) as w:
        x = w.new_exchange()
        url = "https://api.test/v1/chat/completions?q=" + PAYLOADS[0]
        w.request(x, "POST", url, [("x-note", HOSTILE)], json.dumps(body).encode())
        w.response(x, 200, [("content-type", "text/event-stream"), ("x-echo", HOSTILE)])
        w.chunk(x, chunk({"role": "assistant", "content": HOSTILE, "tool_calls": [call]}))
        w.chunk(x, chunk({"tool_calls": [rest]}))
        w.chunk(x, chunk({}, "tool_calls") + b"data: [DONE]\n\n")
        w.end(x, "complete")
    return str(path)


# -- Markdown --------------------------------------------------------------------------


def table_rows(text: str) -> list[list[str]]:
    """Every GFM table of `text`, checked for its shape (a header, a delimiter row, rows
    of as many cells, split at unescaped pipes), its rows' cells."""
    rows: list[list[str]] = []
    lines = text.split("\n")  # (GFM's line ends: not str.splitlines' U+2028)
    for i, line in enumerate(lines):
        if re.fullmatch(r"\| (--- \| )*--- \|", line):
            width = len(lines[i - 1].split("|"))
            j = i + 1
            while j < len(lines) and lines[j].startswith("|"):
                # (a backslash escapes the character after it: `\|` is no cell's end)
                row = lines[j]
                ends = [m.start() for m in re.finditer(r"\\.|\|", row) if m.group() == "|"]
                starts = [-1, *ends]
                cells = [row[a + 1 : b] for a, b in zip(starts, [*ends, len(row)], strict=True)]
                assert len(cells) == width, lines[j]  # no recorded pipe splits a cell
                rows.append([c.strip() for c in cells[1:-1]])
                j += 1
    return rows


def test_the_markdown_report_is_a_table_at_the_finding_with_the_overwrite_marked(tmp_path):
    text = export_to(tmp_path / "r.md", ALIBABA, "--format", "md")
    assert len(text) < 65000
    assert "#### The calls at frame 2 (528.386 ms): `id-empty-overwrite`" in text
    at, end = text.split("#### Anomalies")
    rows = {r[0]: r for r in table_rows(at)}
    assert rows["robust"][3] == '"call_eee11723464a4b9eb8cee71d"'
    assert rows["naive"][3] == '**""** ⚠' and rows["naive"][7] == "differs"
    ends = {r[0]: r for r in table_rows(end)}
    assert ends["naive"][4] == "**yes**" and ends["openai-docs"][1].startswith("raised: ")


def test_a_link_to_a_frame_opens_the_report_there(tmp_path):
    """FILE#N@F, as inspect prints it beside a finding: the report at that frame."""
    text = export_to(tmp_path / "r.md", f"{ALIBABA}#1@1", "--format", "md")
    assert "#### The calls at frame 1 " in text
    code, said = run(f"{ALIBABA}#1@1", "--format", "md", "--frame", "2")
    assert code == 2 and "names frame 1, and --frame says 2" in said


def test_a_chosen_frame_is_the_table_as_it_stood_there(tmp_path):
    text = export_to(tmp_path / "r.md", ALIBABA, "--format", "md", "--frame", "1")
    assert "#### The calls at frame 1 " in text
    assert "⚠" not in text.split("#### Anomalies")[0]  # before the overwrite: nothing marked
    code, said = run(ALIBABA, "--format", "md", "--frame", "99")
    assert code == 2 and "--frame 99: the stream has frames 1-8" in said


def gfm(text: str) -> str:
    """The Markdown as a GFM renderer makes it HTML (markdown-it: tables, strikethrough)."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable(["table", "strikethrough"]).render(text)


def test_hostile_values_stay_text_in_the_markdown(tmp_path):
    text = export_to(tmp_path / "r.md", hostile_recording(tmp_path / "h.jsonl"), "--format", "md")
    table_rows(text)  # every row as wide as its header
    body = re.sub(r"`[a-z-]+`", "", text)  # (the kinds, the report's own code spans)
    unescaped = re.sub(r"\\.", "", body)  # (what a backslash escapes is text)
    for markup in ("<", "`", "](", "\x1b", "\x00", "\u2028", "\r"):
        assert markup not in unescaped, markup
    assert "&lt;/script>&lt;script>" in text  # said, as text
    html = gfm(text)
    for tag in ("<script", "<img", "<a ", "<!--", "<del", "<em"):
        assert tag not in html, tag
    assert html.count("<code>") * 2 == text.count("`") - text.count("\\`")  # the kinds alone
    assert "a|b`c`**d** [x](javascript:alert(1))" in html  # rendered as the text it is


def test_the_markdown_escapes_only_what_a_table_cell_needs():
    """A user reads the raw Markdown too: `:` `_` `@` `[` stay as they are."""
    said = '{"city":"Paris","unit":"c"} get_weather user@example.com [1, 2] a:b'
    assert report_md.esc(said) == said
    assert report_md.esc("a|b\\c`d`*e* _f_ $x$ <i> &amp; ~s~ @octocat") == (
        "a\\|b\\\\c\\`d\\`\\*e\\* \\_f\\_ \\$x\\$ &lt;i> &amp;amp; \\~s\\~ &#64;octocat"
    )
    html = gfm("| a |\n| --- |\n| " + report_md.esc("a|b\\c`d`*e* _f_ <i> &amp; x\ny") + " |\n")
    assert "<td>a|b\\c`d`*e* _f_ &lt;i&gt; &amp;amp; x\ny</td>" in html


def test_a_long_report_is_cut_with_a_note():
    lines = ["| a |", "| --- |", *(f"| {'x' * 90} |" for _ in range(2000))]
    text = report_md._within(lines)
    assert len(text) <= report_md.LIMIT and text.endswith(report_md.CUT)
    assert text.splitlines()[-3].startswith("| x")  # cut between rows


def test_options_of_the_other_formats_are_refused():
    assert run(ALIBABA, "--format", "md", "--minimal")[0] == 2
    code, said = run(ALIBABA, "--frame", "2")
    assert code == 2 and "--frame and --redact-content apply to the reports" in said


# -- what a report leaves out -----------------------------------------------------------


@pytest.mark.parametrize("fmt", ["md", "html"])
def test_redact_content_leaves_none_of_the_conversations_text(tmp_path, fmt):
    plain = export_to(tmp_path / f"plain.{fmt}", ALIBABA, "--format", fmt)
    assert "Hangzhou" in plain  # (the test can fail)
    if fmt == "html":  # the whole recording: the tool's result and the answer too
        assert "overcast" in plain and "light north wind" in plain
    text = export_to(tmp_path / f"r.{fmt}", ALIBABA, "--format", fmt, "--redact-content")
    assert [t for t in SAMPLE_TEXTS if t in text] == []
    quirk = ["call_eee11723464a4b9eb8cee71d", "get_weather"]
    assert all(q in text for q in quirk)  # the quirk stays
    assert "id-empty-overwrite" in text


def test_a_redacted_request_keeps_its_settings_and_names_not_its_conversation():
    body = {
        "model": "m",
        "max_tokens": 50,
        "messages": [
            {"role": "user", "content": "secret plan"},
            {"role": "tool", "tool_call_id": "c1", "content": {"temp": 23, "city": "Oslo"}},
        ],
    }
    got = _redact_value(body, None, 0)
    assert got == {
        "model": "m",
        "max_tokens": 50,
        "messages": [
            {"role": "user", "content": "…"},
            {"role": "tool", "tool_call_id": "c1", "content": {"temp": 0, "city": "…"}},
        ],
    }


def test_redacted_arguments_keep_their_keys_and_shape():
    assert shape('{"location": "Hangzhou, Zhe') == '{"location": "…'
    assert (
        shape('{"a": [1, "x", true], "b": {"c": -2.5e3}}') == '{"a": [0, "…", true], "b": {"c": 0}}'
    )
    assert shape({"a": "x", "n": 7}) == {"a": "…", "n": 0}
    assert shape("not json at all") == "…"


@pytest.mark.parametrize("fmt", ["md", "html"])
def test_a_report_of_a_har_holds_none_of_its_keys(tmp_path, fmt):
    code, said = run(har(tmp_path), "--format", fmt, "-o", str(tmp_path / f"r.{fmt}"))
    assert code == 0, said
    assert leaked(tmp_path / f"r.{fmt}") == []


def test_a_failed_write_leaves_no_half_written_file(tmp_path, monkeypatch):
    out = tmp_path / "r.html"
    out.write_bytes(b"before")

    def full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OSError):
        write_private_whole(out, b"x" * 100_000)
    assert out.read_bytes() == b"before" and os.listdir(tmp_path) == ["r.html"]


def test_the_report_is_built_on_every_frame_of_the_stream():
    (stream, *_) = build(ALIBABA, 1).streams
    assert [s.number for s in stream.states] == list(range(stream.frames + 1))
    assert stream.finding_frame == 2
    assert stream.states[2].tables["naive"].calls[0].id == ""  # type: ignore[index]


# -- the HTML page, in Chromium ---------------------------------------------------------


@pytest.fixture(scope="module")
def alibaba_page(tmp_path_factory):
    path = tmp_path_factory.mktemp("report") / "alibaba.html"
    code, said = run(ALIBABA, "--format", "html", "-o", str(path))
    assert code == 0, said
    return path


def root(dom: str) -> str:
    """The <html> element as the page left it: data-ready once drawn, data-error on an
    uncaught error, data-csp-violation on a refusal, data-frame the frame shown."""
    return dom.split("<head", 1)[0]


def _cell(dom: str, client: str, field: str) -> str:
    box = dom.split(f'data-client="{client}"', 1)[1].split("data-client=", 1)[0]
    m = re.search(rf'<td class="([^"]*)" data-field="{field}"[^>]*>([^<]*)</td>', box)
    assert m is not None, box
    return f"{m.group(1)}|{m.group(2)}"


@pytest.mark.slow
@needs_chromium
def test_the_html_report_shows_the_overwrite_marked_at_its_frame(alibaba_page):
    dom, console = dump_dom(alibaba_page)  # no frame in the URL: it opens at the finding
    assert root(dom) == '<!DOCTYPE html>\n<html lang="en" data-frame="2" data-ready="1">'
    assert console == []
    assert _cell(dom, "naive", "id") == 'v differs|""'
    assert _cell(dom, "robust", "id") == 'v|"call_eee11723464a4b9eb8cee71d"'
    assert '<span class="mark">id-empty-overwrite</span>' in dom
    assert '<li data-frame="2" class="here">' in dom  # the anomaly at this frame


@pytest.mark.slow
@needs_chromium
def test_no_script_of_a_hostile_recording_runs_in_the_html_report(tmp_path):
    page = tmp_path / "h.html"
    text = export_to(page, hostile_recording(tmp_path / "h.jsonl"), "--format", "html")
    data = text.split('id="report-data">', 1)[1].split("</script>", 1)[0]
    assert "<" not in data  # the data block cannot be closed from inside
    dom, console = dump_dom(page, "frame=2")
    # drawn, no error, no refusal, no attribute the payloads set
    assert root(dom) == '<!DOCTYPE html>\n<html lang="en" data-frame="2" data-ready="1">'
    assert console == []
    assert "<img" not in dom and "<title>streamscope report</title>" in dom
    assert dom.count("<script") == 2  # the page's own two, none from the data
    assert "&lt;/script&gt;&lt;script&gt;" in dom  # the payload, shown as text
    assert "\\x1b" in dom or "\\u001b" in dom  # a control character made visible


# the frame shown, naive's id cell at it (its class and text), and the URL's fragment
SHOWN = (
    "[document.documentElement.getAttribute('data-frame'),"
    " document.querySelector('[data-client=naive] td[data-field=id]').className,"
    " document.querySelector('[data-client=naive] td[data-field=id]').textContent,"
    " location.hash]"
)


def shown_cells(state) -> Iterator[str]:
    """A frame's id, name and arguments cells as the page writes them (report.js shown)."""
    for table in state.tables.values():
        for c in table.calls or []:
            for v in (c.id, c.name, c.arguments):
                raw = v is c.arguments and isinstance(v, str) and v != ""
                yield v if raw else json.dumps(v, separators=(",", ":"), ensure_ascii=False)


@pytest.mark.slow
@needs_chromium
def test_moving_the_slider_shows_each_frames_table_and_names_it_in_the_url(alibaba_page):
    with Page(alibaba_page, "frame=1") as page:
        # opened at the URL's frame: before the overwrite, nothing marked
        assert page.evaluate(SHOWN) == ["1", "v", '"call_eee11723464a4b9eb8cee71d"', "#frame=1"]
        assert page.evaluate("document.querySelectorAll('td.differs').length") == 0
        # a person drags the slider one step: the input event, the page's own handler
        page.evaluate(
            "var s = document.getElementById('frame-slider');"
            "s.value = String(Number(s.value) + 1); s.dispatchEvent(new Event('input'))"
        )
        assert page.evaluate(SHOWN) == ["2", "v differs", '""', "#exchange=1&frame=2"]
        page.evaluate("document.querySelectorAll('.controls button')[0].click()")  # ◀ frame
        assert page.evaluate(SHOWN)[:2] == ["1", "v"]
        page.evaluate("document.querySelectorAll('.controls button')[2].click()")  # next anomaly
        assert page.evaluate(SHOWN)[0] == "2"
        # each frame's cells, rebuilt from its change from the one before (compact), are
        # the ones built for it
        cells = (
            "Array.from(document.querySelectorAll('[data-client] td[data-field]'))"
            ".map(function (td) { return td.textContent; })"
        )
        step = "var s = document.getElementById('frame-slider'); s.value = '%d';"
        step += " s.dispatchEvent(new Event('input'))"
        for state in build(ALIBABA, 1).streams[0].states:
            page.evaluate(step % state.number)
            assert page.evaluate(cells) == list(shown_cells(state)), state.number
        assert page.console == []


def test_the_page_opens_where_the_markdown_points(tmp_path):
    text = export_to(tmp_path / "r.html", ALIBABA, "--format", "html", "--frame", "1")
    assert '"open":{"stream":0,"frame":1}' in text
    text = export_to(tmp_path / "d.html", ALIBABA, "--format", "html")
    assert '"open":{"stream":0,"frame":null}' in text


def test_a_report_of_many_calls_stays_within_a_comment_and_says_it_was_cut(tmp_path):
    base = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m"}
    body = []
    for i in range(700):
        call = {"index": i, "id": f"call_{i}", "type": "function"}
        call["function"] = {"name": "f", "arguments": json.dumps({"i": i})}
        delta = {"tool_calls": [call]}
        doc = {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
        body.append(f"data: {json.dumps(doc)}\n\n")
    (tmp_path / "many.sse").write_text("".join(body) + "data: [DONE]\n\n")
    many = str(tmp_path / "many.sse")
    text = export_to(tmp_path / "r.md", many, "--format", "md", "--frame", "700")
    assert len(text) <= report_md.LIMIT
    table_rows(text)  # still tables, cut between rows
    assert "… 600 more calls" in text  # each table holds its first 100 calls


def test_a_long_streams_conclusions_survive_the_cut_and_the_note_names_what_was_cut(
    tmp_path, monkeypatch
):
    """3,000 calls, each with the same quirk: one grouped anomaly line, and when even
    the finding's table is too long it is shortened, never the conclusions."""
    report = build(many_calls(tmp_path / "m.sse", 3000), one=3000)
    text = report_md.render(report, 3000)
    assert "`args-opener-nonempty` ×3000 (frames 1, 2, 3, 4, 5, 6, 7, 8, … 3000)" in text
    assert text.count("args-opener-nonempty") == 2  # the frame's mark and the group
    monkeypatch.setattr(report_md, "LIMIT", 20000)
    text = report_md.render(report, 3000)
    assert len(text) <= 20000
    assert "#### What each client builds" in text and "#### The contract" in text
    assert "**Shortened** to fit" in text and "The calls at frame 3000 (each client's first" in text
    table_rows(text)


# -- what a new user found (issue 34) ---------------------------------------------------

SESSION = os.path.join(ROOT, "codex-websocket.jsonl")  # one session, 3 responses; the 2nd calls
TEXT_ONLY = (
    "".join(
        "data: "
        + json.dumps(
            {
                "id": "c",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": "m",
                "choices": [{"index": 0, "delta": d, "finish_reason": f}],
            }
        )
        + "\n\n"
        for d, f in [
            ({"role": "assistant", "content": "Hello"}, None),
            ({"content": " world"}, "stop"),
        ]
    )
    + "data: [DONE]\n\n"
)


def test_a_session_report_has_each_responses_frames_and_opens_on_the_one_with_a_call(tmp_path):
    report = build(SESSION)
    assert [len(s.states) for s in report.streams] == [s.frames + 1 for s in report.streams]
    assert report_md.pick(report, None)[0].turn == 2
    text = export_to(tmp_path / "s.html", SESSION, "--format", "html")
    assert '"open":{"stream":1,"frame":null}' in text


@pytest.mark.slow
@needs_chromium
def test_the_session_page_opens_on_its_response_with_a_call(tmp_path):
    page = tmp_path / "s.html"
    export_to(page, SESSION, "--format", "html")
    with Page(page) as p:
        assert p.evaluate("document.querySelector('#stream h2').textContent") == (
            "The request (exchange 1, response 2)"
        )
        assert p.evaluate("document.getElementById('frame-slider').max") == "9"
        # its call's response, as inspect numbers it (the session's response 2)
        first = "[...document.querySelectorAll('.client[data-client=robust] tr')]"
        first += ".map(r => r.firstElementChild.textContent)"
        assert p.evaluate(first) == ["response", "2"]
        p.evaluate("location.hash = '#exchange=1&response=3&frame=2'")  # a link to response 3
        shown = "[document.querySelector('#stream h2').textContent, document.documentElement"
        shown += ".getAttribute('data-frame')]"
        for _ in range(100):
            if p.evaluate(shown) == ["The request (exchange 1, response 3)", "2"]:
                break
        assert p.evaluate(shown) == ["The request (exchange 1, response 3)", "2"]
        assert p.console == []


def test_a_link_to_a_sessions_response_is_its_report(tmp_path):
    text = export_to(tmp_path / "r.md", f"{SESSION}#1.2@3", "--format", "md")
    assert "exchange 1, response 2 of" in text and "#### The calls at frame 3 " in text
    assert export_to(tmp_path / "t.md", SESSION, "--turn", "2", "--format", "md").startswith(
        text.split("\n")[0]
    )
    code, said = run(f"{SESSION}#1.9", "--format", "md")
    assert code == 2 and "has responses 1-3, not 9" in said


def test_a_body_file_says_it_has_no_request_and_a_text_stream_shows_its_text(tmp_path):
    (tmp_path / "t.sse").write_text(TEXT_ONLY)
    text = export_to(tmp_path / "r.md", str(tmp_path / "t.sse"), "--format", "md")
    assert '"" ""' not in text and "no request recorded" in text
    assert "(no call yet)" not in text and "No tool call in this stream" in text
    assert "**Text at frame 3**: Hello world" in text and "**Text at the end**: Hello world" in text
    html = export_to(tmp_path / "r.html", str(tmp_path / "t.sse"), "--format", "html")
    assert '"recorded":false' in html and '"text+":" world"' in html


@pytest.mark.parametrize(
    "args, said",
    [
        (["--format", "md", "--frame", "0"], "--frame 0: frames are numbered from 1"),
        (["#1@0", "--format", "md"], "#1@0: frames are numbered from 1"),
        (["#1@2", "--frames", "1-3"], "names frame 2, and --frames says 1-3"),
        (["#1@2", "--format", "md", "--frame", "3"], "names frame 2, and --frame says 3"),
    ],
)
def test_frames_follow_one_rule_and_a_link_refuses_options_that_disagree(args, said):
    tail = args[0] if args[0].startswith("#") else ""
    code, out = run(ALIBABA + tail, *args[1 if tail else 0 :])
    assert code == 2 and said in out and out.strip().count("\n") == 0, out


def test_options_that_agree_with_the_link_are_accepted():
    assert run(f"{ALIBABA}#1@2", "--frames", "1-2")[1] == run(ALIBABA, "--frames", "1-2")[1]
    code, said = run(f"{ALIBABA}#1@2", "--format", "md", "--frame", "2", "--frames", "1-2")
    assert code == 0 and "#### The calls at frame 2 " in said


def many_calls(path, calls: int) -> str:
    base = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m"}
    with open(path, "w") as f:
        for i in range(calls):
            call = {"index": i, "id": f"call_{i}", "type": "function"}
            call["function"] = {"name": "f", "arguments": json.dumps({"i": i})}
            doc = {**base, "choices": [{"index": 0, "delta": {"tool_calls": [call]}}]}
            f.write(f"data: {json.dumps(doc)}\n\n")
        f.write("data: [DONE]\n\n")
    return str(path)


def test_a_long_streams_page_grows_with_the_stream_not_frames_times_calls(tmp_path):
    page = export_to(tmp_path / "r.html", many_calls(tmp_path / "m.sse", 150), "--format", "html")
    assert len(page) < 400_000  # (5.7 MB when each of its 151 frames held its tables whole)


@pytest.mark.slow
@needs_chromium
def test_a_long_streams_page_says_which_frames_it_kept_and_when_a_link_misses(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(report_module, "MAX_STATES", 40)  # (as 400 frames of 3,000: 10x quicker)
    page = export_to(tmp_path / "r.html", many_calls(tmp_path / "m.sse", 300), "--format", "html")
    assert "301 frames, 40 kept in this report: the first 20 of 301 marked frames" in page
    note = "document.querySelector('.fallback') && document.querySelector('.fallback').textContent"
    with Page(tmp_path / "r.html", "frame=299") as p:
        assert p.evaluate(note) == (
            "Frame 299 was not kept in this report (see the note above); "
            "showing frame 286, the kept frame before it."
        )
        p.evaluate("location.hash = '#exchange=9&frame=50'")
        for _ in range(100):
            if p.evaluate("document.getElementById('link-miss') !== null"):
                break
        assert "names exchange 9: this report has no such stream" in str(
            p.evaluate("document.getElementById('link-miss').textContent")
        )
        assert p.console == []


@pytest.mark.parametrize(
    "name, head, said",
    [
        (
            "gemini-signature-dropped",
            ["client", "candidate", "call", "id", "signature", "name"],
            "call 1 signature none (robust ",
        ),
        (
            "responses-interleaved",
            ["client", "response", "output", "item_id", "call_id", "name"],
            'call 1 arguments "" (robust ',
        ),
    ],
)
def test_the_report_shows_what_differs_in_the_dialects_own_columns(name, head, said):
    report = build(os.path.join(ROOT, f"{name}.jsonl"), one=None)
    text = report_md.render(report)
    at, end = text.split("#### Anomalies")
    assert at.split("\n| --- ")[0].rsplit("\n", 1)[1].startswith("| " + " | ".join(head) + " |")
    ends = [r for r in table_rows(end) if r[4] == "**yes**"]
    assert any(r[5].startswith(report_md.esc(said)) for r in ends), ends


def _page_data(page: str) -> dict:
    """The report's data as the page's script reads it (its JSON block)."""
    block = page.split('<script type="application/json" id="report-data">', 1)[1]
    return json.loads(block.split("</script>", 1)[0])


def _robust_at_end(stream: dict) -> list[dict]:
    """Robust's calls at a page's last frame, rebuilt from each frame's change."""
    calls: list[dict] = []
    for st in stream["states"]:
        t = st["changes"].get("robust", {})
        if "calls" in t:
            calls = [dict(c) for c in t["calls"]]
        calls = calls[: t.get("n", len(calls))] + [{} for _ in range(t.get("n", 0) - len(calls))]
        for k, fields in t.get("set", []):
            calls[k] = {**calls[k], **fields}
    return calls


def test_a_responses_calls_say_their_response_as_inspect_numbers_it(tmp_path):
    from .dialects.realtime.events import WEATHER, call, response

    # a session's response 2, and a saved Realtime file of two responses (1 first)
    saved = tmp_path / "two.jsonl"
    second = response(call(0, "item_2", "call_2"), rid="resp_2")
    saved.write_text("".join(json.dumps(e) + "\n" for e in [*WEATHER, *second]))
    for source, want in ((SESSION, [2]), (str(saved), [1, 2])):
        data = _page_data(export_to(tmp_path / "r.html", source, "--format", "html", "--force"))
        (stream,) = [s for s in data["streams"] if s["calls"]]
        assert stream["columns"][0] == ["response", "choice"]  # the page's first column
        assert [c["choice"] for c in _robust_at_end(stream)] == want
        text = report_md.render(build(source, one=None))
        assert [r[1] for r in table_rows(text) if r[0] == "robust"][: len(want)] == [
            str(n) for n in want
        ]


def test_a_report_opens_at_its_first_error_before_an_earlier_info():
    report = build(os.path.join(ROOT, "anthropic-spliced-message.jsonl"), one=None)
    stream = report_md.pick(report, None)[0]
    assert stream.anomalies[0].severity == "info" and stream.finding_frame == 4
    assert "#### The calls at frame 4 " in report_md.render(report)


def test_a_sessions_report_says_why_its_response_and_shows_the_message_that_opened_it():
    report = build(SESSION, one=None)
    text = report_md.render(report)
    assert "_Response 2 of 3 shown: none has a finding: the first with a call " in text
    assert "**Request**: the client message `response.create` (session: GET https://" in text
    assert "1 value masked (secrets:" in text  # at record time, as inspect says
    alone = report_md.render(build(ALIBABA, 1, one=None))
    assert "**Request**: POST https://dashscope.aliyuncs.com/" in alone and "shown:" not in alone


@pytest.mark.slow
@needs_chromium
def test_a_stream_with_no_anomaly_offers_no_next_anomaly(tmp_path):
    (tmp_path / "t.sse").write_text(TEXT_ONLY)
    export_to(tmp_path / "r.html", str(tmp_path / "t.sse"), "--format", "html")
    dom, console = dump_dom(tmp_path / "r.html")
    assert re.search(r'<button id="next-anomaly" hidden', dom) and console == []
