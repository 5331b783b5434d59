"""The laws every framing keeps, for its tests: the same bytes cut anywhere give the
same frames, and a copy taken at any read carries on as the original does."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from streamscope.core.frames import Frame, Truncation
from streamscope.framing import Framing


def shape(frames: Sequence[Frame]) -> list[tuple[object, ...]]:
    """What must not depend on where the reads were cut (read indexes and times do)."""
    return [
        (
            f.number,
            f.data,
            repr(f.payload),
            f.event,
            f.start,
            f.end,
            f.bad_utf8,
            f.invalid,
            f.headers,
        )
        for f in frames
    ]


def read_all(
    new: Callable[[], Framing], pieces: Sequence[bytes]
) -> tuple[list[Frame], Truncation | None]:
    framing = new()
    frames: list[Frame] = []
    for k, piece in enumerate(pieces):
        frames += framing.feed(piece, k)
    frames += framing.flush()
    return frames, framing.finish()


def cut(body: bytes, points: Sequence[int]) -> list[bytes]:
    at = sorted({min(max(p, 0), len(body)) for p in points})
    edges = [0, *at, len(body)]
    return [body[a:b] for a, b in zip(edges, edges[1:], strict=False)]


def rechunked_alike(new: Callable[[], Framing], body: bytes, points: Sequence[int]) -> None:
    whole, end = read_all(new, [body])
    frames, cut_end = read_all(new, cut(body, points))
    assert shape(frames) == shape(whole)
    assert repr(cut_end) == repr(end)
    for f in frames:  # each frame's reads are the ones its bytes came from
        assert f.first_read <= f.last_read


def copy_carries_on(
    new: Callable[[], Framing], body: bytes, points: Sequence[int], at: int
) -> None:
    pieces = cut(body, points)
    at = min(at, len(pieces))
    framing = new()
    before: list[Frame] = []
    for k, piece in enumerate(pieces[:at]):
        before += framing.feed(piece, k)
    twin = framing.copy()
    rest: dict[str, list[Frame]] = {}
    for name, f in (("original", framing), ("copy", twin)):
        got: list[Frame] = []
        for k, piece in enumerate(pieces[at:], at):
            got += f.feed(piece, k)
        got += f.flush()
        rest[name] = got
        rest[name + " end"] = [f.finish()]  # type: ignore[list-item]
    assert shape(rest["original"]) == shape(rest["copy"])
    assert repr(rest["original end"]) == repr(rest["copy end"])
    whole, _ = read_all(new, [body])
    assert shape(before + rest["copy"]) == shape(whole)
