"""The command line: thin faces over the one engine."""

from __future__ import annotations

import contextlib
import importlib
import io
import os
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, NoReturn

import click

from . import __version__
from .text import past_the_end, plural, say, visible

if TYPE_CHECKING:
    from .recording.ahead import Ahead
    from .tui.keyboard import KeyboardApp


def fail(message: str) -> None:
    """Bad input: one line on stderr, exit status 2, never a traceback."""
    say(message)
    sys.exit(2)


def refuse_output(output: str | None, force: bool) -> None:
    """`-o FILE` that names a directory, or a file that holds something (without --force):
    one line, before anything is read or written."""
    if output is None:
        return
    if os.path.isdir(output):
        fail(f"{output}: is a directory; -o names the file to write")
    if not force and os.path.exists(output) and os.path.getsize(output):
        fail(f"{output}: already exists; streamscope never overwrites it without --force")


@contextlib.contextmanager
def _reading(file: str) -> Iterator[None]:
    """What reading `file` raises, as one line naming it (fail)."""
    from .recording.format import RecordingError

    try:
        yield
    except RecordingError as e:
        fail(str(e))
    except ValueError as e:
        fail(f"{file}: {e}")
    except OSError as e:
        fail(f"{file}: {e.strerror or e}")


def reader_left() -> NoReturn:
    """Standard output's reader left before the end (`inspect FILE | head -1`): it has
    what it wanted. The command ends as scan's always has, quietly (no message, no
    traceback) with status 0, standard output sent to /dev/null so that what is still
    buffered does not fail again at exit. Every command, its help and `-V` end so."""
    _to_devnull(sys.stdout)
    sys.exit(0)


def output_failed(error: OSError) -> NoReturn:
    """Standard output cannot be written, its reader still there (`> /dev/full`, a disk
    that filled): one line, status 2 as for any other file that cannot be written, never a
    traceback. What is still buffered goes to /dev/null, as when the reader leaves; with
    standard error unwritable too the status alone tells."""
    _to_devnull(sys.stdout)
    try:
        say(f"standard output: {error.strerror or error}")
    except (OSError, ValueError):
        _to_devnull(sys.stderr)
    sys.exit(2)


def _to_devnull(stream: Any) -> None:
    """`stream`'s descriptor is /dev/null from now on: what it still buffers goes there."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())


class StandardOutputError(OSError):
    """A write to standard output failed for a reason other than its reader leaving."""


class _StandardOutput(io.FileIO):
    """Standard output's descriptor, whose failed writes say they are its own: an OSError
    met elsewhere (a file, a socket) is not standard output's to report."""

    def write(self, data: Any) -> int:
        try:
            return super().write(data)
        except BrokenPipeError:
            raise
        except OSError as e:
            raise StandardOutputError(e.errno, e.strerror) from None


def _watch_standard_output() -> None:
    """sys.stdout, as Python opened it (encoding, buffering, line buffering on a
    terminal), over a descriptor whose failed writes raise StandardOutputError; left as
    it is when it is not a file's (click's test runner)."""
    out = sys.stdout
    if not isinstance(out, io.TextIOWrapper) or not isinstance(out.buffer, io.IOBase):
        return
    binary = out.buffer
    raw = binary if isinstance(binary, io.FileIO) else getattr(binary, "raw", None)
    if not isinstance(raw, io.FileIO) or isinstance(raw, _StandardOutput):
        return
    out.flush()
    watched = _StandardOutput(raw.fileno(), "w", closefd=False)
    sys.stdout = io.TextIOWrapper(
        watched if binary is raw else io.BufferedWriter(watched),
        encoding=out.encoding,
        errors=out.errors,
        line_buffering=out.line_buffering,
        write_through=out.write_through,
    )


@contextlib.contextmanager
def _until_the_reader_leaves() -> Iterator[None]:
    """A command's run, its output flushed at its end, or at the reader leaving (click
    would say nothing and exit 1), or at standard output failing (a traceback)."""
    try:
        try:
            yield
        finally:  # (what is still buffered fails here, not at exit; None: closed, >&-)
            if sys.stdout is not None:
                sys.stdout.flush()
    except BrokenPipeError:
        reader_left()
    except StandardOutputError as e:
        output_failed(e)


class Commands(click.Group):
    """A group whose --help lists each command's one-line summary whole (click cuts it
    to the terminal's width with "..."), and whose commands, interrupted, say so and exit
    130 as a shell does (click said "Aborted!" and exit 1).

    The commands of `LAZY` are defined in their own module, imported only when one of them
    runs or is listed: what their options are made of costs every other command's start-up.
    """

    LAZY = {"proxy": "streamscope.record.commands", "record": "streamscope.record.commands"}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *self.LAZY})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in self.commands and name in self.LAZY:
            importlib.import_module(self.LAZY[name])  # (its commands add themselves)
        return super().get_command(ctx, name)

    def main(self, *args: Any, **kwargs: Any) -> Any:
        # the caller's sys.stdout is put back after (run in-process, `main()` leaves it as
        # it was; and the watched one shares its descriptor: the caller's object, dropped,
        # would close it under the watched one)
        caller = sys.stdout
        _watch_standard_output()
        try:
            return super().main(*args, **kwargs)
        finally:
            if sys.stdout is not caller:
                with contextlib.suppress(OSError, ValueError):
                    sys.stdout.flush()
                sys.stdout = caller

    def make_context(self, *args: Any, **kwargs: Any) -> click.Context:
        with _until_the_reader_leaves():  # (the group's own --help is written here)
            return super().make_context(*args, **kwargs)

    def invoke(self, ctx: click.Context) -> object:
        try:
            with _until_the_reader_leaves():
                return super().invoke(ctx)
        except KeyboardInterrupt:
            name = ctx.invoked_subcommand
            say(f"{name} interrupted" if name else "interrupted")
            sys.exit(130)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, command.get_short_help_str(limit=10_000)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


@click.group(cls=Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="streamscope")
def main() -> None:
    """See exactly what an LLM provider streamed, and what every client would have made of it.

    \b
    Shell completion, in ~/.bashrc (zsh: zsh_source, fish: fish_source):
      eval "$(_STREAMSCOPE_COMPLETE=bash_source streamscope)"
    """


class ListsKeys(click.Command):
    """`replay --help` lists every key from the replay's own table (tui/keys.py), read
    when the help is shown: the table is the replay's, not every command's start-up."""

    def format_help_text(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        import textwrap

        from .tui.keys import listed

        said = self.help
        self.help = f"{(said or '').rstrip()}\n\n" + textwrap.indent(listed(), "    ")
        try:
            super().format_help_text(ctx, formatter)
        finally:
            self.help = said


# what --strict fails on (core/verdict.py), said alike by inspect and scan
STRICT_HELP = (
    "Exit 1 when any error or warning is found (an anomaly or a contract finding), or an "
    "exchange that is not a stream failed (for CI); info findings and what follows from "
    "the client closing a stream early (cut_by_client) do not fail it."
)


@main.command()
@click.argument("file")
@click.option("--json", "as_json", is_flag=True, help="Print the analysis contract's JSON.")
@click.option("--exchange", type=click.IntRange(min=1), help="Only this exchange of a recording.")
@click.option(
    "--strict",
    is_flag=True,
    help=STRICT_HELP,
)
@click.option(
    "--full",
    is_flag=True,
    help="Print each call's arguments and each tool result whole, not cut to a line.",
)
def inspect(file: str, as_json: bool, exchange: int | None, strict: bool, full: bool) -> None:
    """Say what FILE's streams contain: calls, quirks, and what each client builds.

    FILE is any of these, told apart by its content (never by its name), a file or a
    pipe (- or /dev/stdin, a shell's <(cmd)):

    \b
      - a streamscope recording (recordings/*.jsonl)
      - a raw SSE body, as `curl -N` or a browser saves it
      - a chunk log: JSON Lines (NDJSON) of stream events, chat.completion.chunk
        objects or another API's (an Ollama body)
      - a saved JSON array of stream events (Gemini without alt=sse)
      - a saved AWS event stream (Bedrock, boto3)
      - a HAR 1.2 capture (browser devtools, mitmproxy, Charles, Proxyman)
      - a vcrpy or go-vcr test cassette, YAML or JSON

    A saved stream or a cassette may be gzip-compressed. FILE#N (as `scan` prints it)
    is exchange N of FILE (the same as --exchange N); FILE#N@F and FILE#N.R@F
    (the links printed beside each finding) report exchange N too, once its stream has
    frame F (and the WebSocket session its response R).
    """
    from .analysis import analyze
    from .recording.format import RecordingError

    given = file
    file, exchange, response, frame = split_link(file, exchange)
    try:
        analysis = analyze(file, exchange)
    except RecordingError as e:
        fail(str(e))
    except OSError as e:
        fail(f"{file}: {e.strerror or e}")
    if exchange is not None and (response is not None or frame is not None):
        wrong = _linked_wrong(given, analysis.streams, exchange, response, frame)
        if wrong is not None:
            fail(wrong)
    from .dialects import sdk_note

    note = sdk_note(s.dialect for s in analysis.streams)
    if as_json:
        from .core.report import dumps_json, report_json
        from .dialects import sdk_verified, sdk_versions
        from .inputs import RECORDED

        doc = report_json(
            analysis.source,
            analysis.format,
            analysis.streams,
            analysis.contract,
            analysis.stopped,
            [f.to_json() for f in analysis.failures],
            analysis.notes,
            sdk_versions(),
            analysis.masked,
            sdk_verified=sdk_verified(),
            sdk_note=note,
            answers=analysis.answers,
            turn_answers=analysis.turn_answers,
            turn_tools=analysis.turn_tools,
            tools=analysis.tools,
            requested=analysis.format in RECORDED,
            redacted=analysis.redacted,
        )
        sys.stdout.buffer.write(dumps_json(doc) + b"\n")
    else:
        from .analysis.text_report import render
        from .console import Console

        # In a pipe or a CI log, long lines beat lines wrapped at 80 columns.
        width = None if sys.stdout.isatty() else 160
        render(analysis, Console(width=width), note, full)
    if strict:
        from .core.verdict import fails

        bad = (
            any(fails(a.severity, a.cut_by_client) for s in analysis.streams for a in s.anomalies)
            or any(fails(f.severity) for f in analysis.contract)
            or bool(analysis.failures)
        )
        if bad:
            sys.exit(1)


@main.command()
@click.argument("a")
@click.argument("b")
@click.option("--json", "as_json", is_flag=True, help="Print the differences as JSON.")
def diff(a: str, b: str, as_json: bool) -> None:
    """Say what differs between the streams of A and B: dialect and framing, the calls,
    the anomalies, what each client builds, the contract findings and the timing shape.

    A and B are anything `inspect` reads (recordings, SSE bodies, chunk logs, HAR);
    FILE#N is exchange N of FILE only, FILE#N.R response R of the WebSocket session
    exchange N is. Streams are paired by exchange, by request or by
    position, as the output says. Exit 0 when the same, 1 when they differ, 2 on bad
    input.
    """
    from .analysis.diff import diff as compare
    from .analysis.diff import diff_json
    from .analysis.sides import load
    from .recording.format import RecordingError

    sides = []
    for given in (a, b):
        file, exchange, response, frame = split_link(given, None)
        if frame is not None:
            fail(f"{given}: diff compares whole streams, not a frame (drop @{frame})")
        try:
            side = load(file, exchange, response)
        except RecordingError as e:
            fail(str(e))
        except OSError as e:
            fail(f"{file}: {e.strerror or e}")
        if exchange is not None and response is not None:
            wrong = _linked_wrong(given, side.analysis.streams, exchange, response, None)
            if wrong is not None:
                fail(wrong)
        sides.append(side)
    found = compare(sides[0], sides[1])
    if as_json:
        from .core.report import dumps_json

        sys.stdout.buffer.write(dumps_json(diff_json(sides[0], sides[1], found)) + b"\n")
    else:
        from .analysis.diff_text import render

        print("\n".join(render(sides[0], sides[1], found)))
    sys.exit(0 if found.same else 1)


@main.command(cls=ListsKeys)
@click.argument("file")
@click.argument("other", metavar="[B]", required=False)
@click.option(
    "--exchange", type=click.IntRange(min=1), help="Open this exchange of a recording directly."
)
@click.option(
    "--response",
    type=click.IntRange(min=1),
    help="Of the WebSocket session --exchange names, open this response.",
)
@click.option("--frame", type=click.IntRange(min=0), default=0, help="Start at this frame.")
@click.option("--follow", is_flag=True, help="Reload as a recording that is being written grows.")
def replay(
    file: str,
    other: str | None,
    exchange: int | None,
    response: int | None,
    frame: int,
    follow: bool,
) -> None:
    """Step through FILE's streams frame by frame, and watch each tool call being assembled.

    FILE is a streamscope recording, a raw SSE body (as `curl -N` saves it), JSON Lines
    of chat.completion.chunk objects (or another API's events) or a HAR 1.2 capture; the
    kind is read from its content. A recording or HAR opens on its exchanges, one per
    row; a single stream opens on its frames; a WebSocket session on its messages.
    FILE#N (as `scan` prints it) opens exchange N directly; FILE#N.R opens response R
    of the WebSocket session that exchange N is (the same as --response R); FILE#N@F
    and FILE#N.R@F (as `inspect` and `scan` print beside each finding) open it at frame
    F (the same as --frame F).

    `replay A B` opens two streams side by side (A and B as `diff` reads them, FILE#N for
    one exchange): the first pair `diff` finds different, stepped together by the share
    of their arguments assembled, the cells that differ marked, and what `diff` found.
    """
    from .inputs import KIND_WORDS
    from .recording.format import RecordingError

    if "-" in (file, other):
        fail("-: replay reads its keys from standard input: save the stream to a file first")
    if other is not None:
        _side_by_side(file, other, exchange, response, frame, follow)
        return

    given, typed = file, frame
    file, exchange, response, linked = split_link(file, exchange, response, frame or None)
    frame = linked or 0
    if response is not None and exchange is None:
        fail("--response names a response of the WebSocket session --exchange names")

    if follow:
        _followable(file)
    # a big recording's index is scanned in a child process while the TUI is imported
    # (before the import: the fork must come before any thread), every line checked as
    # inspect checks it: the scan is the one read the replay makes before its first frame
    from .recording.ahead import scan_ahead

    ahead = None if follow else scan_ahead(file, tolerant=False, check=True)
    try:
        from .tui.app import ReplayApp

        app = ReplayApp(file, exchange, frame, follow, response, ahead)
    except RecordingError as e:
        fail(str(e))
    # not followed: a line inspect refuses is its one line, before any screen
    with _reading(file), _progress_line(file) as progress:
        app.read_before_screen(progress)
    if not app.recorded and exchange not in (None, 1):
        fail(f"{file}: {KIND_WORDS[app.format]} holds one stream (exchange 1), not {exchange}")
    if exchange is not None and app.recorded and not follow:
        # an exchange the file lacks is said before the screen is drawn: after it, the
        # error would follow the TUI's escape codes (the index is kept for the TUI)
        try:
            app.input.exchange(exchange)
        except RecordingError as e:
            fail(str(e))
        except OSError as e:
            fail(f"{file}: {e.strerror or e}")
    # a link's response and frame (as inspect says them), before the screen
    named = (exchange is not None and response is not None) or (linked and not typed)
    if named and not follow:
        _check_linked(given, file, exchange, response, None if typed else linked)
    try:
        beyond = app.frame_error()  # said before the screen too
    except RecordingError as e:
        fail(str(e))
    except OSError as e:
        fail(f"{file}: {e.strerror or e}")
    if beyond is not None:
        fail(beyond)
    _run_screen(app, ahead)
    if app.failure is not None:
        print(app.failure, file=sys.stderr, flush=True)  # (made visible by the app)
    if app.return_code:
        sys.exit(app.return_code)


def _followable(file: str) -> None:
    """--follow watches a file grow: a pipe (`<(cmd)`) or a device is one line, exit 2
    (it is read once, and looking for its first line would read it)."""
    import stat

    try:
        mode = os.stat(file).st_mode
    except OSError:
        return  # (not created yet: waited for; else opening it says why)
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        fail(
            f"{file}: --follow watches a file being written, not a pipe (without --follow, "
            "a pipe is read once and whole)"
        )
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        fail(f"{file}: --follow watches a file being written, not a device")


@contextlib.contextmanager
def _progress_line(file: str) -> Iterator[Callable[[int, int], None] | None]:
    """A progress callback for reading `file` before the screen: on a terminal, after
    half a second, `reading FILE … 42%` on stderr (cleared when done); else None."""
    import time

    if not sys.stderr.isatty():
        yield None
        return
    from .recording.copies import name_of

    start, shown = time.monotonic(), [0.0]
    name = visible(name_of(file))

    def progress(done: int, total: int) -> None:
        now = time.monotonic()
        if now - start >= 0.5 and now - shown[0] >= 0.1:
            shown[0] = now
            sys.stderr.write(f"\rreading {name} … {done * 100 // max(total, 1)}%")
            sys.stderr.flush()

    try:
        yield progress
    finally:
        if shown[0]:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


def _side_by_side(
    a: str, b: str, exchange: int | None, response: int | None, frame: int, follow: bool
) -> None:
    from .recording.format import RecordingError
    from .tui.sidebyside import SideError, open_pair

    if exchange is not None or response is not None or frame or follow:
        fail("replay A B: --exchange, --response, --frame and --follow are for one file (A#N)")
    sides = []
    for given in (a, b):
        file, number, turn, at = split_link(given, None)
        if turn is not None or at is not None:  # (was: left out unsaid)
            fail(
                f"{given}: replay A B steps two whole streams, each an exchange (FILE#N): "
                "a session's response (#N.R) or a frame (@F) opens with one file"
            )
        sides.append((file, number))
    try:
        app = open_pair(sides[0], sides[1])
    except (RecordingError, SideError) as e:
        fail(str(e))
    _run_screen(app)


def _run_screen(app: KeyboardApp, ahead: Ahead | None = None) -> None:
    """The replay's screen; standard input no terminal is one line (tui/keyboard.py),
    `ahead`'s scan stopped."""
    from .tui.keyboard import NoKeyboard

    try:
        app.run()
    except NoKeyboard as e:
        if ahead is not None:
            ahead.close()
        fail(str(e))


def split_link(
    file: str,
    exchange: int | None,
    response: int | None = None,
    frame: int | None = None,
    options: tuple[str, str, str] = ("--exchange", "--response", "--frame"),
) -> tuple[str, int | None, int | None, int | None]:
    """FILE#N, FILE#N.R, FILE#N@F, FILE#N.R@F (core/links.py) as the file, exchange N,
    response R and frame F; a link and an option that disagree, or a bad link, are one
    line and exit 2. A file whose own name holds `#` is that file: the path is checked
    first; `-` is standard input. `options`: the face's own names for the exchange, the
    response, the frame."""
    from .core.links import LinkError, parse

    if file == "-":  # standard input: a pipe, read once as /dev/stdin is (`./-`: a file)
        if sys.stdin.isatty():
            fail("-: standard input is a terminal: pipe a stream in (cmd | streamscope ... -)")
        return "/dev/stdin", exchange, response, frame
    try:
        got = parse(file)
    except LinkError as e:
        fail(str(e))
        raise  # (unreached: for the type checker)
    if got is None:
        return file, exchange, response, frame
    for option, asked, named, what in (
        (options[0], exchange, got.exchange, "exchange"),
        (options[1], response, got.response, "response"),
        (options[2], frame, got.frame, "frame"),
    ):
        if asked is not None and named is not None and asked != named:
            fail(f"{file}: names {what} {named}, and {option} says {asked}")
    return (
        got.file,
        got.exchange,
        got.response if got.response is not None else response,
        got.frame if got.frame is not None else frame,
    )


def _linked_wrong(
    given: str, streams: list, exchange: int, response: int | None, frame: int | None
) -> str | None:
    """What a link's response or frame names that exchange `exchange` lacks (None: it
    has it), said as replay says it."""
    mine = [s for s in streams if s.exchange == exchange]
    if not mine:
        return f"{given}: exchange {exchange} is not a stream: it has no frames"
    session = any(s.turn is not None for s in mine)
    if response is not None:
        if not session:
            return f"{given}: exchange {exchange} is no WebSocket session, it has no responses"
        mine = [s for s in mine if s.turn == response]
        if not mine:
            return f"{given}: the WebSocket session has no response {response}"
    elif session and frame is not None:
        return (
            f"{given}: exchange {exchange} is a WebSocket session: a frame is a frame of one "
            f"of its responses (#{exchange}.R@F names it)"
        )
    if frame is not None and frame > mine[0].frames:
        return f"{given}: {past_the_end(frame, mine[0].frames)}"
    return None


def _check_linked(
    given: str, file: str, exchange: int | None, response: int | None, frame: int | None
) -> None:
    """What link `given` names (a session's response, a frame) checked against the file
    before a screen is drawn or a file written: one line, exit 2, as inspect says it."""
    from .analysis import analyze
    from .recording.format import RecordingError

    try:
        streams = analyze(file, exchange).streams
    except RecordingError as e:
        fail(str(e))
    except OSError as e:
        fail(f"{file}: {e.strerror or e}")
    wrong = _linked_wrong(given, streams, exchange or 1, response, frame)
    if wrong is not None:
        fail(wrong)


def _check_frame(frame: int, where: str) -> None:
    """A frame number by core/links.py's one rule (from 1): else one line, exit 2."""
    from .core.links import LinkError, check_frame

    try:
        check_frame(frame, where)
    except LinkError as e:
        fail(str(e))


def _range(frames: str) -> tuple[int, int] | None:
    """--frames A-B as its two ends (None: not a range of two numbers)."""
    first, _, last = frames.partition("-")
    try:
        return int(first), int(last)
    except ValueError:
        return None


def split_reference(file: str, exchange: int | None) -> tuple[str, int | None]:
    """FILE#N as `scan` prints it: the file and exchange N (split_link's first two)."""
    file, exchange, _, _ = split_link(file, exchange)
    return file, exchange


EXPORT_OPTIONS = ("--exchange", "--turn", "--frames")


@main.command()
@click.argument("file")
@click.option(
    "--exchange",
    type=click.IntRange(min=1),
    help="The exchange of a recording (default: its first stream).",
)
@click.option("--frames", "frames", metavar="A-B", help="Only frames A to B (1-based, inclusive).")
@click.option(
    "--turn",
    type=click.IntRange(min=1),
    help="A WebSocket session's turn K alone (sse and chunks write one turn's stream).",
)
@click.option(
    "--minimal",
    is_flag=True,
    help="Shrink to the fewest frames and fields that keep the same quirks.",
)
@click.option(
    "--keep-fields",
    is_flag=True,
    help="With --minimal: keep volatile fields (system_fingerprint, obfuscation, usageMetadata, ...).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(
        ["sse", "chunks", "recording", "session", "pytest", "vcr", "md", "html", "otlp"]
    ),
    default="sse",
    show_default=True,
    help="sse: the body as received; chunks: one event's JSON a line (a chunk log); "
    "recording: a streamscope recording; session: a WebSocket session as JSON, turn by turn; "
    "pytest: a test module needing only the stream's SDK and pytest; "
    "vcr: a vcrpy / pytest-recording cassette (without --exchange, every HTTP exchange); "
    "md: a report for an issue comment; html: one self-contained page to share; "
    "otlp: OpenTelemetry traces (OTLP/JSON), a span per exchange.",
)
@click.option(
    "--frame",
    type=int,
    help="md, html: the frame the report opens at, from 1 (default: its first finding's).",
)
@click.option(
    "--redact-content",
    is_flag=True,
    help="md, html: leave out the conversation's text, tool results and argument values "
    "(keys and shapes kept).",
)
@click.option(
    "--include-content",
    is_flag=True,
    help="otlp: write the conversation's text, tool arguments and results too (left out by default).",
)
@click.option(
    "--otlp-endpoint",
    metavar="URL",
    help="otlp: send the traces to this OTLP/HTTP collector (protobuf; a URL without a path "
    "gets /v1/traces) instead of writing them.",
)
@click.option(
    "-o",
    "--output",
    metavar="OUT",
    help="Write here instead of standard output (- for standard output).",
)
@click.option("--force", is_flag=True, help="Replace OUT if it exists (refused otherwise).")
def export(
    file,
    exchange,
    frames,
    turn,
    minimal,
    keep_fields,
    fmt,
    frame,
    redact_content,
    include_content,
    otlp_endpoint,
    output,
    force,
) -> None:
    """Write one stream of FILE, or a WebSocket session, as a test fixture: an SSE body, a chunk log, a recording, a session fixture, a pytest module or a vcrpy cassette; or a report to share (md, html); or FILE as OpenTelemetry traces (otlp).

    FILE#N (as `scan` prints it) is exchange N of FILE (the same as --exchange N);
    FILE#N.R is response (turn) R of the WebSocket session exchange N is (--turn R), a
    report's too; FILE#N@F and FILE#N.R@F, as `inspect` prints them beside a finding,
    are that stream up to frame F (--frames 1-F): the frames the replay has shown at that
    link; a report (md, html) opens at frame F (--frame F). Options that agree with the
    link are accepted; frames are numbered from 1.

    --format otlp writes every exchange (or --exchange N's) as GenAI spans, one trace per
    conversation, the findings as streamscope.* span events, as OTLP/JSON;
    --otlp-endpoint URL sends them to an OTLP/HTTP collector (Phoenix: http://HOST:6006)
    instead. The conversation's text goes only with --include-content.
    """

    from .export.fixtures import export as make

    given = file
    file, exchange, turn, linked = split_link(file, exchange, turn, None, EXPORT_OPTIONS)
    output = None if output == "-" else output
    if otlp_endpoint is not None or fmt == "otlp" or include_content:
        return _export_otlp(
            given, file, exchange, turn, linked, fmt, include_content, otlp_endpoint, output, force
        )
    report = fmt in ("md", "html")
    if frame is not None:
        _check_frame(frame, f"--frame {frame}")
    if linked is not None:  # FILE#N@F: a report opens at frame F, a fixture stops there
        _check_linked(given, file, exchange, turn, linked)
        if frame is not None and frame != linked:
            fail(f"{given}: names frame {linked}, and --frame says {frame}")
        if frames is not None and _range(frames) != (1, linked):
            fail(f"{given}: names frame {linked}, and --frames says {frames} (not 1-{linked})")
        if report:
            frame, frames = linked, None
        else:
            frame, frames = None, f"1-{linked}"
    refuse_output(output, force)
    if report and (frames or minimal or keep_fields):
        fail("--frames, --minimal and --keep-fields make fixtures; a report shows the stream whole")
    if not report and (frame is not None or redact_content):
        fail("--frame and --redact-content apply to the reports (--format md or html)")
    with _reading(file):
        if report:
            from .export.report import write

            done = write(file, fmt, exchange, frame, redact_content, turn)
        elif fmt == "vcr":
            from .export.vcr import cassette

            if turn is not None:
                fail("--turn picks a turn of a WebSocket session; vcrpy records no WebSockets")
            done = cassette(file, exchange, frames, minimal, keep_fields)
        else:
            done = make(file, fmt, exchange, frames, minimal, keep_fields, turn)
    if minimal and done.turns_in is not None:  # a session: its turns, then its frames
        before = f"{plural(done.turns_in, 'turn')}, {plural(done.frames_in, 'frame')}"
        say(
            f"{before} -> {plural(done.turns_out or 0, 'turn')}, {plural(done.frames_out, 'frame')}"
        )
    elif minimal:
        say(f"{plural(done.frames_in, 'frame')} -> {plural(done.frames_out, 'frame')}")
    for note in done.notes:
        say(note)
    if done.masked:  # the one change export makes to the bytes, said
        say(f"{plural(done.masked, 'value')} masked (secrets the request carried)")
    if output is None:
        if sys.stdout.isatty():  # a terminal is shown the bytes, never given them to run
            text = done.data.decode("utf-8", "replace")
            shown = visible(text, lines=True)
            sys.stdout.write(shown)
            if shown != text:
                say(
                    "standard output is a terminal: control characters are shown escaped "
                    "(-o OUT, or a pipe, gets the exact bytes)"
                )
            return
        sys.stdout.buffer.write(done.data)
        return
    from .recording.private import write_private_whole

    try:
        # 0600: a fixture holds a conversation too; whole or not at all
        write_private_whole(output, done.data)
    except OSError as e:
        fail(f"{output}: cannot write: {e.strerror or e}")
    say(f"wrote {output}")


def _export_otlp(
    given, file, exchange, turn, linked, fmt, content, endpoint, output, force
) -> None:
    """`export --format otlp` (and `--otlp-endpoint`): the recording as traces, written
    as OTLP/JSON or sent as OTLP/HTTP protobuf."""

    ctx = click.get_current_context()
    explicit = ctx.get_parameter_source("fmt") != click.core.ParameterSource.DEFAULT
    if fmt != "otlp" and (explicit or endpoint is None):
        fail("--include-content and --otlp-endpoint apply to --format otlp")
    for name in ("frames", "minimal", "keep_fields", "frame", "redact_content"):
        if ctx.params.get(name):
            flag = "--" + name.replace("_", "-")
            fail(f"{flag} does not apply to --format otlp (it exports every frame's findings)")
    if linked is not None:
        fail(f"{given}: --format otlp exports exchanges, not a frame (leave out @{linked})")
    if endpoint is not None and output is not None:
        fail("--otlp-endpoint sends the traces; -o writes them: choose one")
    refuse_output(output, force)
    from .export import otlp

    try:
        url = otlp.endpoint_url(endpoint) if endpoint is not None else None
    except ValueError as e:
        fail(str(e))
    with _reading(file):
        traces = otlp.build(file, content, exchange, turn, name=file)
    if traces.masked:
        say(f"{plural(traces.masked, 'value')} masked (secrets the requests carried)")
    counted = f"{plural(traces.spans, 'span')} in {plural(traces.traces, 'trace')}"
    if url is not None:
        try:
            data = otlp.to_protobuf(traces.request)
        except ImportError:
            fail("--otlp-endpoint needs opentelemetry-proto: pip install 'streamscope[otlp]'")
        try:
            said = otlp.send(url, data)
        except OSError as e:
            fail(f"{otlp.shown(url)}: {e}")
        say(f"sent {counted} to {otlp.shown(url)}" + (f" ({said})" if said else ""))
        return
    if output is None:
        sys.stdout.buffer.write(traces.json(shown=True))
        return
    from .recording.private import write_private_whole

    try:
        write_private_whole(output, traces.json())
    except OSError as e:
        fail(f"{output}: cannot write: {e.strerror or e}")
    say(f"wrote {output} ({counted})")


def speed_option(default: float, help: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """`--speed`: a recording's timing divided by it (serve, demo, conformance)."""
    return click.option(
        "--speed", type=click.FloatRange(min=0), default=default, show_default=True, help=help
    )


@main.command()
@click.argument("files", nargs=-1, required=True)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=0,
    show_default=True,
    help="Port on 127.0.0.1; 0 takes a free one.",
)
@speed_option(
    0.0, "Recorded timing divided by this: 1 is as recorded, 2 twice as fast, 0 no waiting."
)
@click.option(
    "--strict",
    is_flag=True,
    help="Answer a request that matches no recorded one with an error, not the next stream.",
)
def serve(files, port, speed, strict) -> None:
    """Play FILES back as an OpenAI-, Anthropic-, Gemini- or Ollama-style provider on 127.0.0.1 (prints its base URL).

    FILES are recordings, HAR captures, raw SSE bodies or chunk logs, their exchanges
    one after the other. A request that asks for a stream ("stream": true, or its API's
    streaming method) gets a recorded stream, any other a recorded non-stream response,
    each from an exchange of the request's own API. Which exchange answers a request:

    \b
    1. the recorded request whose JSON body has the same model, system, instructions,
       messages, input, previous_response_id, contents, systemInstruction and tools
       (other keys, such as temperature or stream_options, are ignored; a Gemini
       model is read from the path); the one served fewest times first;
    2. else the next exchange in order, each served once before any is served again;
    3. with --strict, only an exchange with no recorded request (an SSE body, a chunk
       log) may answer it; else the answer is a 400 error naming what differed from
       the closest recorded request.

    A recorded WebSocket session (the Responses API over a WebSocket, as Codex speaks
    it; the Realtime API) is played to a WebSocket client on the path it was recorded
    on: each message that opens a turn gets the recorded turn it matches by the same
    rules, each other message what followed a recorded one of its type, at the recorded
    timing; a message nothing recorded answers gets the API's error event.
    """
    from .core.links import LinkError, parse
    from .playback.serve import serve as run_serve
    from .recording.format import RecordingError

    for name in files:  # a link names one exchange; serve answers from whole files
        try:
            got = parse(name)
        except LinkError as e:
            fail(str(e))
        if got is not None:
            fail(f"{name}: serve plays whole files, not one exchange: give {got.file}")
    try:
        run_serve(list(files), port, speed, strict, echo=click.echo)
    except RecordingError as e:
        fail(str(e))
    except OSError as e:  # said as `proxy` says it
        fail(f"cannot listen on 127.0.0.1:{port}: {e.strerror or e}")
    except ValueError as e:
        fail(str(e))
    except KeyboardInterrupt:
        pass


@main.command()
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(min=1),
    default=None,
    help="Worker processes (default: the number of CPUs).",
)
@click.option(
    "--jsonl", is_flag=True, help="Print one JSON row per exchange instead of the summary."
)
@click.option(
    "--db",
    metavar="FILE",
    help="Write the rows to this DuckDB file (tables files, exchanges, calls, anomalies, "
    "contract); a later scan into it reads only files that changed.",
)
@click.option("--parquet", metavar="DIR", help="Write the same tables as DIR/TABLE.parquet.")
@click.option(
    "--strict",
    is_flag=True,
    help=STRICT_HELP + " Each is listed on stderr as its link (FILE#N@F): kind: message.",
)
@click.option(
    "--engine",
    type=click.Choice(["local", "ray"]),
    default="local",
    show_default=True,
    help="local: worker processes on this machine; ray: tasks on a Ray cluster "
    "(RAY_ADDRESS, else a local one).",
)
@click.option(
    "--kind",
    metavar="KIND",
    help="Instead of the summary, list every finding of this anomaly or contract kind, "
    "one a line: its link (FILE#N@F), then its message.",
)
def scan(paths, jobs, jsonl, db, parquet, strict, engine, kind) -> None:
    """Analyse every recording under the PATHs (folders, globs, files) and summarise them.

    Per provider host and model: exchanges, streams, each anomaly kind with the share of
    streams it hits, contract breaks, and the first links (FILE#N@F: exchange N, the
    frame the anomaly is first seen at; FILE#N for a contract break) of each to open
    with `streamscope replay`. A file that cannot be read is one line, and the scan goes
    on. A PATH that is a link scans its file, whole.
    """
    import os

    from .core.links import LinkError, parse

    if kind is not None:
        _check_kind(kind, jsonl)
    try:  # a link names its file: a scan reads whole files
        paths = [got.file if (got := parse(p)) is not None else p for p in paths]
    except LinkError as e:
        fail(str(e))

    try:  # (Ctrl-C as the scan's modules load is an interrupted scan too)
        from .scan.errors import ScanError
        from .scan.main import Options
        from .scan.main import scan as run_scan
    except KeyboardInterrupt:
        say("scan interrupted")
        sys.exit(130)
    try:
        status = run_scan(
            Options(
                list(paths),
                jobs or os.cpu_count() or 1,
                jsonl,
                db,
                parquet,
                strict,
                engine,
                kind=kind,
            )
        )
    except ScanError as e:
        fail(str(e))
    except KeyboardInterrupt:  # Ctrl-C: what the database holds so far stays
        say("scan interrupted")
        status = 130
    sys.exit(status)


def _check_kind(kind: str, jsonl: bool) -> None:
    """--kind names a kind the registries know (a typo would list nothing, silently)."""
    import difflib

    from .core.contract import KINDS as CONTRACT_KINDS
    from .dialects import ANOMALY_KINDS

    if jsonl:
        fail("--kind lists links, --jsonl prints rows: give one of them")
    known = sorted({*ANOMALY_KINDS, *CONTRACT_KINDS})
    if kind in known:
        return
    close = difflib.get_close_matches(kind, known, n=5, cutoff=0.6)
    close += [k for k in known if kind in k and k not in close][: 5 - len(close)]
    if close:
        fail(f"no finding kind {kind!r}; did you mean: {', '.join(close)}")
    fail(f"no finding kind {kind!r}, nor one close to it (inspect --json names each kind)")


def samples_dir() -> str:
    """The bundled sample recordings: in the package (a wheel) or beside it (a checkout)."""
    from .bundled import samples_folder

    folder = samples_folder()
    if folder is None:
        fail("the bundled sample recordings are missing from this installation")
        return ""
    return folder


def sample_names(folder: str | None = None) -> list[str]:
    """The bundled samples' names, not recordings a user made beside them ([] when the
    samples are missing)."""
    import os

    if folder is None:
        try:
            folder = samples_dir()
        except SystemExit:
            return []
    return sorted(
        n[:-6]
        for n in os.listdir(folder)
        if n.endswith(".jsonl") and ".chunks" not in n and not n.startswith("streamscope-")
    )


def _complete_samples(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[click.shell_completion.CompletionItem]:
    from click.shell_completion import CompletionItem

    return [CompletionItem(n) for n in ["list", *sample_names()] if n.startswith(incomplete)]


@main.command()
@click.argument(
    "quirk", required=False, default="alibaba-empty-id", shell_complete=_complete_samples
)
@click.option("--no-replay", is_flag=True, help="Record and summarise, but do not open the replay.")
@speed_option(1.0, "The sample's recorded timing divided by this: 2 twice as fast, 0 no waiting.")
def demo(quirk: str, no_replay: bool, speed: float) -> None:
    """The whole story offline: a sample served, an agent recorded, then replayed.

    QUIRK's sample is served as the provider, a real agent on its provider's own SDK (the
    sample's dialect's demo agent) is recorded through the recorder, then the replay opens
    on what was recorded.

    QUIRK is a bundled sample's name (default alibaba-empty-id); `streamscope demo list`
    lists them.
    """
    import os

    from .dialects import dialect
    from .inputs.source import WEBSOCKET
    from .playback.serve import ServeServer
    from .providers import DEFAULT_SIDE, placeholder_credentials, provider_of
    from .record.runner import default_output, record

    folder = samples_dir()
    names = sample_names(folder)
    if quirk == "list":
        click.echo("\n".join(names))
        return
    if quirk not in names:
        fail(f"no sample {quirk!r}; one of: {', '.join(names)}")
    from .analysis import analyze

    first = analyze(os.path.join(folder, f"{quirk}.jsonl")).exchanges[0]
    told = dialect(first.dialect).name
    provider = provider_of(told)
    session = first.framing == WEBSOCKET  # (the Responses API is spoken both ways)
    agent = provider.demo_agent(told, session) if provider is not None else None
    if provider is None or agent is None:
        over = " over a WebSocket" if session else ""
        fail(f"the {quirk} sample speaks {told}{over}, which no demo agent speaks")
        return
    if not agent.installed():
        install = agent.pip or agent.sdk
        fail(f"the {quirk} demo runs an agent on the {agent.sdk} SDK: pip install {install}")
    # the agent asks as the sample's first request did: it reads what its API needs of it
    body = analyze_request(os.path.join(folder, f"{quirk}.jsonl"))
    from .core import jsonio

    os.environ["AGENT_REQUEST"] = jsonio.dumps(body).decode()
    os.environ["AGENT_URL"] = first.url or ""
    if first.model:
        os.environ["AGENT_MODEL"] = first.model
    # the provider's sides point at the served sample: its SDKs' placeholder keys
    os.environ.update(placeholder_credentials(provider.sides, os.environ))
    path = default_output()
    with ServeServer([os.path.join(folder, f"{quirk}.jsonl")], 0, speed=speed) as server:
        timing = "no waiting" if not speed else "recorded timing"
        timing += f" at {speed:g}x" if speed not in (0, 1) else ""
        say(f"the provider: {quirk}.jsonl served at {server.base_url} ({timing})")
        status = record(
            [sys.executable, "-m", *agent.argv],
            server.base_url,
            path,
            0,
            [],
            True,
            [],
            60.0,
            # the sample's provider's sides, each on the served sample (the default: above)
            {
                side.name: server.base_url_for(provider)
                for side in provider.sides
                if side is not DEFAULT_SIDE
            },
        )
    if status != 0:
        fail(f"the demo agent exited with status {status}")
    if not no_replay:
        from .tui.app import ReplayApp

        _run_screen(ReplayApp(path))


def analyze_request(path: str) -> dict:
    """The first request's JSON body of a recording: a session's is the client message
    that opened its first turn, as its handshake has none ({} when it has none)."""
    from .inputs import open_input
    from .inputs.encoding import request_json

    with open_input(path) as source:
        exchange = source.exchange(source.numbers()[0])
        session = exchange.session()
        if session is not None:
            body = session.turns[0].request if session.turns else None
        else:
            request = exchange.request
            body = request_json(request) if request is not None else None
    return body if isinstance(body, dict) else {}


@main.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option(
    "--dialect",
    "dialects",
    multiple=True,
    metavar="NAME",
    help="Only this dialect's cases (repeatable; default: the one the client asks for).",
)
@click.option(
    "--only",
    multiple=True,
    metavar="KIND",
    help="Only the cases of this anomaly kind or sample (repeatable).",
)
@click.option("--list", "list_cases", is_flag=True, help="List the cases and exit.")
@click.option(
    "--loop",
    is_flag=True,
    help="Run COMMAND once for all the cases, one conversation per case "
    "(it is told how many in STREAMSCOPE_CONFORMANCE_CASES); needs --dialect.",
)
@click.option("--json", "as_json", is_flag=True, help="The report card as JSON on stdout.")
@click.option(
    "--timeout",
    type=click.FloatRange(min=0.1),
    default=60.0,
    show_default=True,
    metavar="SECONDS",
    help="A case's time bound: a client still running then is stopped and graded as hung.",
)
@speed_option(1.0, "Serve at the recorded timing divided by this (0: no waiting).")
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Cases run at once.",
)
@click.option(
    "-o",
    "--output",
    metavar="DIR",
    help="The folder for each case's recording (default: recordings/conformance-<UTC time>/).",
)
@click.option("--force", is_flag=True, help="Replace the recordings -o DIR holds of these cases.")
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def conformance(
    dialects, only, list_cases, loop, as_json, timeout, speed, jobs, output, force, command
) -> None:
    """Grade a client on every known quirk: streamscope conformance -- python agent.py

    COMMAND is run once per case, its SDK's base URL variables pointing at a local mock
    provider (behind the recorder) that answers its first request with the case's
    stream and its next with a final text. Each case passes when the next request sends
    back the calls streamscope assembled, or, where they cannot go back as streamed,
    when the client refuses them. Prints a report card per dialect: what each case
    expected, what the client sent back, which known client it behaved like, and a link
    to replay each failure. Exit status 0 when every case passes, 1 when one fails, 2
    when the client cannot be graded.
    """
    from .conformance.main import Refused, chosen_cases, listing
    from .conformance.main import run as run_conformance
    from .record.runner import StartError

    try:
        chosen, skipped = chosen_cases(dialects, only)  # (bad options first)
        if list_cases:
            click.echo(listing(chosen, [] if dialects or only else skipped))
            return
        if not command:
            fail("conformance needs a command to grade: streamscope conformance -- python agent.py")
        status = run_conformance(
            list(command), dialects, only, as_json, timeout, speed, jobs, output, loop, force
        )
    except (Refused, StartError) as e:
        fail(str(e))
    except OSError as e:
        fail(f"{e.filename or output}: {e.strerror or e}")
    sys.exit(status)


if __name__ == "__main__":
    main()
