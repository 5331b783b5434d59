"""The child side of `summarize_in_child`: `python -m streamscope.analysis PATH`; and of
`FollowingChild`: `python -m streamscope.analysis --follow PATH`, one JSON line of the
rows that changed for each line read from stdin, until stdin ends."""

import sys

import orjson

from ..recording.format import RecordingError
from .driver import FollowedSummaries, summarize_exchanges


def follow(path: str) -> None:
    out = sys.stdout.buffer
    try:
        summaries = FollowedSummaries(path)
    except RecordingError as e:
        print(e, file=sys.stderr)
        sys.exit(2)
    for _ in sys.stdin.buffer:
        try:
            rows = [r.to_json() for r in summaries.update()]
            said = {"rows": rows, "read": summaries.reader.bytes_read}
        except (RecordingError, OSError) as e:  # the file went away: said, asked again later
            said = {"error": str(e)}
        out.write(orjson.dumps(said) + b"\n")
        out.flush()


if sys.argv[1] == "--follow":
    follow(sys.argv[2])
else:
    try:
        rows = summarize_exchanges(sys.argv[1])
    except RecordingError as e:
        print(e, file=sys.stderr)
        sys.exit(2)
    sys.stdout.buffer.write(orjson.dumps([r.to_json() for r in rows]))
