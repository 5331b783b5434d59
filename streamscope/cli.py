"""The command line: thin faces over the one engine."""

from __future__ import annotations

import sys

import click
import orjson

from . import __version__


def _fail(message: str) -> None:
    """Bad input: one line on stderr, exit status 2, never a traceback."""
    click.echo(f"streamscope: {message}", err=True)
    sys.exit(2)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="streamscope")
def main() -> None:
    """See exactly what an LLM provider streamed, and what every client would have made of it."""


@main.command()
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=False))
@click.option("--json", "as_json", is_flag=True, help="Print the analysis contract's JSON.")
@click.option("--exchange", type=click.IntRange(min=1), help="Only this exchange of a recording.")
@click.option("--strict", is_flag=True, help="Exit 1 when any warning or error is found (for CI).")
def inspect(file: str, as_json: bool, exchange: int | None, strict: bool) -> None:
    """Say what FILE's streams contain: calls, quirks, and what each client builds.

    FILE is a streamscope recording, a raw SSE body (as `curl -N` saves it) or
    JSON Lines of chat.completion.chunk objects; the kind is read from its content.
    """
    from .analysis import analyze
    from .recording.format import RecordingError

    try:
        analysis = analyze(file, exchange)
    except RecordingError as e:
        _fail(str(e))
    except OSError as e:
        _fail(f"{file}: {e.strerror or e}")
    if as_json:
        from .core.report import report_json

        doc = report_json(
            analysis.source, analysis.format, analysis.streams, analysis.contract, analysis.stopped
        )
        sys.stdout.buffer.write(orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n")
    else:
        from rich.console import Console

        from .text_report import render

        # In a pipe or a CI log, long lines beat lines wrapped at 80 columns.
        width = None if sys.stdout.isatty() else 160
        render(analysis, Console(highlight=False, soft_wrap=True, width=width))
    if strict:
        bad = any(a.severity != "info" for s in analysis.streams for a in s.anomalies) or any(
            f.severity != "info" for f in analysis.contract
        )
        if bad:
            sys.exit(1)


if __name__ == "__main__":
    main()
