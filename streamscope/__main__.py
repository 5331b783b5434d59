"""`streamscope` and `python -m streamscope`: the command line (cli.py).

`--version` alone is answered here, before click and the commands are imported (they are
four fifths of its wait), in click's own words (tests/test_cli_help.py holds the two
alike)."""

from __future__ import annotations

import os
import sys

VERSION_FLAGS = ("-V", "--version")


def _closed_to_devnull() -> None:
    """A standard stream the shell closed (`>&-`, `2>&-`, `<&-`) is /dev/null: what is
    written there is discarded as by `>/dev/null`, the command ending with its own exit
    status (Python would leave it None, a traceback at the first write), and no file
    streamscope opens takes its descriptor (a recording opened as descriptor 1 would get
    what a recorded child prints)."""
    for fd, name in ((0, "stdin"), (1, "stdout"), (2, "stderr")):
        if getattr(sys, name) is not None:
            continue
        null = os.open(os.devnull, os.O_RDWR)  # (the lowest free descriptor: this one)
        if null != fd:
            os.dup2(null, fd)
            os.close(null)
        # (open for the whole run: no context manager)
        stream = open(fd, "r" if fd == 0 else "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        setattr(sys, name, stream)


def main() -> None:
    _closed_to_devnull()
    if len(sys.argv) == 2 and sys.argv[1] in VERSION_FLAGS:
        from . import __version__

        try:
            sys.stdout.write(f"streamscope, version {__version__}\n")
            sys.stdout.flush()
        except BrokenPipeError:  # (as every command ends: cli.reader_left)
            from .cli import reader_left

            reader_left()
        except OSError as e:  # (`-V > /dev/full`: as every command ends, cli.output_failed)
            from .cli import output_failed

            output_failed(e)
        return
    from .cli import main as cli

    cli()


if __name__ == "__main__":
    main()
