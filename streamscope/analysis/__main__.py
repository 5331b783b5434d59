"""The child side of `summarize_in_child`: `python -m streamscope.analysis PATH` (a pipe
the parent read whole: `--copy COPY CODING PATH`, its copy read in its name); and of
`FollowingChild`: `python -m streamscope.analysis --follow PATH`, one JSON line of the
rows that changed for each line read from stdin, until stdin ends; and of `record
--live`'s child: `python -m streamscope.analysis --live PATH`, each finding of the recording
on stderr as it is known, until stdin ends (then the last ones, the contract whole)."""

import os
import select
import signal
import sys

from ..core import jsonio
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
        out.write(jsonio.dumps(said, newline=True))
        out.flush()


_POLL = 0.05  # seconds between looks at the recording: a finding is said within this


def live(path: str) -> None:
    """Its own process, so reading never takes the recorder's time; Ctrl-C is the
    recorded command's (and the recorder's) to take: this ends when its stdin does."""
    from ..text import say
    from .live import LiveFindings

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    findings: LiveFindings | None = None
    ended = broken = False
    while not ended:
        ready, _, _ = select.select([0], [], [], _POLL)
        if ready:
            ended = not os.read(0, 4096)
        if broken:
            continue
        try:
            if findings is None:
                findings = LiveFindings(path)
            for line in findings.update(final=ended):
                say(line.text())
        except (RecordingError, OSError):  # not written yet, or gone (nothing recorded)
            continue
        except Exception as e:  # a bug of ours: said once; the recording goes on untouched
            say(f"live findings stopped: {type(e).__name__}: {e} (the summary still comes)")
            broken = True


args = sys.argv[1:]
if args[0] == "--copy":
    from ..recording.copies import given

    _, copy, coding, *args = args
    given(args[-1], copy, coding or None)
if args[0] == "--follow":
    follow(args[1])
elif args[0] == "--live":
    live(args[1])
else:
    try:
        rows = summarize_exchanges(args[0])
    except RecordingError as e:
        print(e, file=sys.stderr)
        sys.exit(2)
    sys.stdout.buffer.write(jsonio.dumps([r.to_json() for r in rows]))
