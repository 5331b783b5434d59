"""The input layer: one door (`open_input`) for every file streamscope reads.

`sniff` tells the kind by structure, `reads` turns a stream's bytes into frames, and
`source` gives the `Source` every face uses: inspect, replay, export, serve and playback.
"""

from .sniff import (
    CASSETTE,
    CASSETTE_JSON,
    CHUNKS,
    EVENTSTREAM,
    HAR,
    JSON_ARRAY,
    KIND_WORDS,
    RECORDED,
    RECORDING,
    SSE,
)
from .source import Exchange, ExchangeInfo, Source, describe_numbers, open_input

__all__ = [
    "CASSETTE",
    "CASSETTE_JSON",
    "CHUNKS",
    "EVENTSTREAM",
    "JSON_ARRAY",
    "HAR",
    "KIND_WORDS",
    "RECORDED",
    "RECORDING",
    "SSE",
    "Exchange",
    "ExchangeInfo",
    "Source",
    "describe_numbers",
    "open_input",
]
