"""Write the key table of docs/commands/replay.md from the replay's keys
(streamscope/tui/keys.py, which also makes its bindings, footer, help screen and
`replay --help`): the rows between the page's two `keys` markers. tests/test_docs.py
fails while the table differs from what this writes. Run it after changing a key:

    .venv/bin/python scripts/key_table.py
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from streamscope.tui.keys import TYPED, every  # noqa: E402

PAGE = ROOT / "docs" / "commands" / "replay.md"
BEGIN = "<!-- keys: scripts/key_table.py writes this table from streamscope/tui/keys.py -->"
END = "<!-- /keys -->"


def table() -> str:
    """Every key the replay answers, a row each, in the help screen's order."""
    rows = ["| key | what it does |", "| --- | --- |"]
    for key in every():
        typed = " / ".join(f"`{TYPED.get(k, k)}`" for k in key.keys)
        rows.append(f"| {typed} | {key.what.replace('|', chr(92) + '|')} |")
    return "\n".join(rows)


def render(page: str) -> str:
    """The page with the table between its markers as the keys make it (ValueError: the
    page lost a marker)."""
    head, found, rest = page.partition(BEGIN)
    _, ended, tail = rest.partition(END)
    if not (found and ended):
        raise ValueError(f"{PAGE.name}: the {BEGIN} ... {END} markers are missing")
    return f"{head}{BEGIN}\n\n{table()}\n\n{END}{tail}"


def main() -> None:
    PAGE.write_text(render(PAGE.read_text(encoding="utf-8")), encoding="utf-8")
    print(f"{PAGE.relative_to(ROOT)}: {len(every())} keys")


if __name__ == "__main__":
    main()
