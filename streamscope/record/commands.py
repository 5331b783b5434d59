"""`streamscope proxy` and `streamscope record`: the recorder's commands, with the options
they share (one upstream option per provider side, streamscope/providers.py).

A module of its own, loaded when one of them runs or help lists them (cli.py's
Commands.LAZY): the provider table their options are made from is a twentieth of every
other command's start-up.
"""

from __future__ import annotations

import signal
import sys

import click

from ..cli import fail, main, refuse_output
from ..core import record as records


def recorder_options(f):
    """The options `proxy` and `record` share: each provider side's upstream
    (streamscope/providers.py), then where and how to record."""
    from ..providers import sides

    options = [
        click.option(side.option, side.param, metavar="URL", help=side.help())
        for _, side in sides()
    ]
    options += [
        click.option(
            "-o",
            "--output",
            metavar="PATH",
            help="The recording to write (default: recordings/streamscope-<UTC time>.jsonl).",
        ),
        click.option(
            "--port",
            type=click.IntRange(0, 65535),
            default=0,
            show_default=True,
            help="Port on 127.0.0.1; 0 takes a free one.",
        ),
        click.option(
            "--timeout",
            type=click.FloatRange(min=0.001),
            default=600.0,
            show_default=True,
            help="Seconds to wait for each upstream read.",
        ),
        click.option(
            "--redact-json",
            "redact_json",
            multiple=True,
            metavar="PATH",
            help="Also mask these request body fields, e.g. messages.*.content (repeatable).",
        ),
        click.option(
            "--no-redact",
            is_flag=True,
            help="Record API keys and cookies in clear (they are masked by default).",
        ),
        click.option(
            "--pseudonymize-ids",
            is_flag=True,
            help="Replace session, thread, conversation and request ids and cache keys "
            "(kept by default) with pseudonyms, the same throughout the recording.",
        ),
        click.option(
            "--force",
            is_flag=True,
            help="Replace the -o recording if it exists (refused otherwise).",
        ),
        click.option(
            "--live",
            is_flag=True,
            help="Print each finding on stderr the moment it is seen, one line each.",
        ),
    ]
    for option in reversed(options):
        f = option(f)
    return f


@records.record(frozen=True)
class RecorderSetup:
    """What `proxy` and `record` were told (recorder_options): the upstream URLs,
    checked, where to write, and how."""

    url: str  # the default side's upstream
    sides: dict[str, str | None]  # every other side's, by name (None: each request's origin)
    output: str | None
    port: int
    timeout: float
    redact_json: list[str]
    no_redact: bool
    pseudonymize_ids: bool = False
    live: bool = False  # each finding said as it is seen


def _recorder_setup(
    output: str | None,
    port: int,
    timeout: float,
    redact_json: tuple[str, ...],
    no_redact: bool,
    force: bool = False,
    pseudonymize_ids: bool = False,
    live: bool = False,
    **upstreams: str | None,
) -> RecorderSetup:
    """recorder_options' values: the upstream URLs (checked, defaults from the
    environment) and the output path; bad input exits 2 in one line."""
    import os

    from ..providers import DEFAULT_SIDE, sides
    from .proxy import Upstream
    from .runner import parse_sides

    urls = {
        side.name: side.upstream(upstreams.get(side.param), dict(os.environ)) for _, side in sides()
    }
    url = urls.pop(DEFAULT_SIDE.name) or ""
    try:
        Upstream.parse(url)
        parse_sides(urls)
    except ValueError as e:
        fail(str(e))
    if no_redact and pseudonymize_ids:
        fail(
            "--pseudonymize-ids with --no-redact: the ids would be hidden, the keys beside them not"
        )
    if no_redact:
        click.echo(
            "streamscope: WARNING: --no-redact: API keys, cookies and auth headers are written "
            "to the recording IN CLEAR. Do not share it.",
            err=True,
        )
    refuse_output(output, force)
    if output is not None and os.path.exists(output) and os.path.getsize(output) > 0:
        try:
            os.truncate(output, 0)  # the writer starts an empty file afresh
        except OSError as e:
            fail(f"{output}: cannot replace it: {e.strerror or e}")
    return RecorderSetup(
        url, urls, output, port, timeout, list(redact_json), no_redact, pseudonymize_ids, live
    )


@main.command()
@recorder_options
def proxy(**options) -> None:
    """Run the recording reverse proxy on 127.0.0.1 until interrupted.

    Prints the base URLs to give clients, one a line, in the order of the upstream
    options (an OpenAI client's first); then records every exchange.
    """
    import time

    from .proxy import ProxyServer, Upstream
    from .runner import (
        STOP_SIGNALS,
        LiveChild,
        StartError,
        announce,
        command_line,
        default_output,
        listen,
        open_recording,
        parse_sides,
        summarize,
    )

    setup = _recorder_setup(**options)
    output, port = setup.output, setup.port
    upstream_ = Upstream.parse(setup.url)
    others = parse_sides(setup.sides)
    try:
        sock = listen(port)  # first: a busy port must not leave an empty recording behind
        try:
            path = output or default_output()
            writer = open_recording(
                path,
                command_line(),
                not setup.no_redact,
                setup.redact_json,
                pseudonymize_ids=setup.pseudonymize_ids,
            )
        except BaseException:
            sock.close()
            raise
    except (StartError, OSError) as e:
        fail(str(e) if isinstance(e, StartError) else f"{e.filename}: {e.strerror or e}")
    caught: list[int] = []

    def on_signal(signum: int, _frame: object) -> None:
        # No lock here (an Event's set takes one): the handler runs in the main thread
        # between two of its steps, perhaps while that thread holds the very lock, and
        # would wait on itself for ever (a SIGTERM once hung the proxy so).
        caught.append(signum)

    # Every stop signal the same way: stop serving, end every open exchange, summarise.
    previous = {sig: signal.signal(sig, on_signal) for sig in STOP_SIGNALS}
    watching = LiveChild(path) if setup.live else None
    with writer:
        server = ProxyServer(upstream_, writer, port, setup.timeout, sock=sock, sides=others)
        server.start()
        for route in server.routes:
            click.echo(server.base_url_of(route.side.name))
        sys.stdout.flush()
        announce(server, path, "; Ctrl-C stops")
        while not caught and server.thread.is_alive():  # type: ignore[union-attr]
            time.sleep(0.05)
        why = f"streamscope got {signal.Signals(caught[0]).name}" if caught else None
        server.stop(why or "the proxy stopped")
    for sig, handler in previous.items():
        signal.signal(sig, handler)
    if watching is not None:
        watching.close()
    summarize(writer)
    if writer.failure is not None:
        sys.exit(1)


@main.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@recorder_options
@click.option(
    "--env",
    "env_names",
    multiple=True,
    metavar="NAME",
    help="Also point this variable at the proxy's OpenAI base URL (repeatable).",
)
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
def record(env_names, command, **options) -> None:
    """Run COMMAND behind the recording proxy: streamscope record -- python agent.py

    COMMAND gets each provider's base URL variables pointing at the proxy's side for
    it ({variables}), and every --env NAME at its OpenAI side; its stdin, stdout and
    stderr are its own. streamscope exits with its status.
    """
    from .runner import StartError, command_line
    from .runner import record as run_record

    setup = _recorder_setup(**options)
    try:
        status = run_record(
            list(command),
            setup.url,
            setup.output,
            setup.port,
            list(env_names),
            not setup.no_redact,
            setup.redact_json,
            setup.timeout,
            setup.sides,
            command_line(),
            pseudonymize_ids=setup.pseudonymize_ids,
            live=setup.live,
        )
    except StartError as e:
        fail(str(e))
    except OSError as e:  # making the default recordings/ folder
        fail(f"{e.filename}: {e.strerror or e}")
    sys.exit(status)


def _said_variables() -> str:
    from ..providers import env_names

    return ", ".join(env_names())


record.help = (record.help or "").format(variables=_said_variables())
