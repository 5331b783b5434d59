"""The child side of `summarize_in_child`: `python -m streamscope.analysis PATH`."""

import sys

import orjson

from ..recording.format import RecordingError
from .driver import summarize_exchanges

try:
    rows = summarize_exchanges(sys.argv[1])
except RecordingError as e:
    print(e, file=sys.stderr)
    sys.exit(2)
sys.stdout.buffer.write(orjson.dumps(rows))  # dataclasses, as orjson writes them
