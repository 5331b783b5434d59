"""`streamscope` and `python -m streamscope`: the command line (cli.py).

`--version` alone is answered here, before click and the commands are imported (they are
four fifths of its wait), in click's own words (tests/test_cli_help.py holds the two
alike)."""

from __future__ import annotations

import sys

VERSION_FLAGS = ("-V", "--version")


def main() -> None:
    if len(sys.argv) == 2 and sys.argv[1] in VERSION_FLAGS:
        from . import __version__

        try:
            sys.stdout.write(f"streamscope, version {__version__}\n")
            sys.stdout.flush()
        except BrokenPipeError:  # (as every command ends: cli.reader_left)
            from .cli import reader_left

            reader_left()
        return
    from .cli import main as cli

    cli()


if __name__ == "__main__":
    main()
