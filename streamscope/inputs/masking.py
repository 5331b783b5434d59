"""Secrets masked as an input is read: the one place every face (inspect text and
`--json`, replay, serve, scan, diff, the reports, export) gets a file's content from.

A recording made with --no-redact, a HAR, a cassette exported from one: their requests
carry credentials in clear (an Authorization, x-api-key or x-goog-api-key header, a
`?key=` query, a command line's `--api-key`), and their bodies may echo them (an upstream's
"Incorrect API key provided: sk-..."). Every credential the file holds is masked wherever
the file holds it, by the rules the recorder writes a recording with (recording/mask.py:
plain, percent-encoded, JSON-escaped, base64; split over reads, or across the text of
consecutive events): what a face shows or sends is what `export` of the same file writes.
Identifiers that are no credential (session and request ids) stay as they are.

The file's credentials are its header's command line's and each request's, learnt in file
order (a HAR's all at once): each is masked from the request that carries it on. A body of
an exchange with credentials to mask is read whole (masked as one body, its reads' lengths
and times kept); a compressed one is read decoded (masked where the client read it), its
response's Content-Encoding left out, as a HAR's decoded body is.
"""

from __future__ import annotations

from collections.abc import Generator, Iterable, Iterator, Sequence
from typing import Any

from ..core.codings import Inflow, content_codings, without_codings
from ..recording.format import (
    Chunk,
    End,
    Header,
    Message,
    Request,
    Response,
)
from ..recording.mask import (
    Masking,
    Secrets,
    argv_credentials,
    mask_argv,
    mask_pieces,
    mask_request,
)
from .reads import Reads

_Line = tuple[int, dict[str, Any]]


class FileMask:
    """One input's credentials, learnt as its lines are read, and its lines masked with
    them: a request (its URL, headers and body), a response's headers, an end's error, a
    body's reads (`reads`). `known`: credentials learnt before (a HAR's, its command line's)."""

    def __init__(self, known: Iterable[str] = ()) -> None:
        self.masking = Masking()
        self.known: dict[str, None] = dict.fromkeys(known)
        self._secrets: dict[int, Secrets] = {}
        # exchanges with credentials, held to their end (feed): response, body lines
        self._held: dict[int, tuple[dict[str, Any] | None, list[_Line]]] = {}

    def header(self, header: Header) -> Header:
        """The header with its command line masked; its credentials are learnt."""
        if not header.argv:
            return header
        self.known.update(dict.fromkeys(argv_credentials(header.argv)))
        argv, n = mask_argv(header.argv)
        if not n:
            return header
        return Header(
            header.created,
            argv,
            header.notes,
            header.masked + n,
            header.tool_version,
            header.schema_version,
            header.tool,
        )

    def request(self, req: Request) -> Request:
        got = mask_request(
            self.masking,
            req.exchange,
            req.url,
            req.headers,
            req.body_bytes,
            list(self.known),
            stored=req.decoded,
        )
        secrets = self.masking.secrets(req.exchange)
        if secrets:
            self._secrets[req.exchange] = secrets
            self.known.update(dict.fromkeys(secrets.values))  # masked in every later line
        if not got.masked:
            return req
        return Request.of(
            req.exchange,
            req.t_ns,
            req.method,
            got.url,
            got.headers,
            got.body,
            req.masked + got.masked,
            got.decoded,
            req.redacted,
        )

    def secrets(self, exchange: int) -> Secrets | None:
        """The credentials to mask in an exchange's body (None: none)."""
        return self._secrets.get(exchange)

    def response(self, resp: Response) -> Response:
        headers, n = self.masking.headers(resp.exchange, resp.headers)
        if self.secrets(resp.exchange) is not None and content_codings(headers):
            headers = without_codings(headers)  # its body is read decoded (`reads`)
        elif not n:
            return resp
        return Response(resp.exchange, resp.t_ns, resp.status, headers, resp.masked + n)

    def end(self, end: End, in_body: int = 0) -> End:
        """The end line, its error masked, counting too the values masked in its body's
        reads (`in_body`: as the recorder's end line counts them)."""
        _, error, n = self.masking.end(end.exchange, end.error)
        if not n + in_body:
            return end
        return End(end.exchange, end.t_ns, end.reason, error, end.masked + n + in_body)

    def reads(
        self, exchange: int, codings: Sequence[str], reads: list[tuple[bytes, Any]]
    ) -> tuple[list[tuple[bytes, Any]], int]:
        """A body's reads masked as one body (their times kept), decoded first when it is
        compressed (`codings`: its response's Content-Encoding); how many were masked."""
        secrets = self.secrets(exchange)
        if secrets is None:
            return reads, 0
        if codings:
            inflow = Inflow(codings)
            reads = [(inflow.feed(data), t) for data, t in reads]
        pieces, counts = mask_pieces(secrets, [data for data, _ in reads])
        return [(p, t) for p, (_, t) in zip(pieces, reads, strict=True)], sum(counts)

    def lines(self, lines: Iterable[_Line]) -> Iterator[_Line]:
        """A recording's lines (Source.records) masked, in one pass."""
        yield from self.feed(lines)
        yield from self.finish()

    def feed(self, lines: Iterable[_Line]) -> Iterator[_Line]:
        """Lines of a recording, masked as they come (--follow feeds the lines appended
        since): an exchange with credentials has its response and reads (or a session's
        frames) held until its end line, then masked as one body (each peer's frames as
        one); the others pass as they are."""
        held = self._held
        for n, d in lines:
            kind = d.get("type")
            if kind == "header":
                yield n, self.header(Header.from_json(d)).to_json()
                continue
            ex = d.get("exchange")
            if kind == "request":
                req = Request.from_json(d)
                shown = self.request(req)
                yield n, d if shown is req else _as_read(shown.to_json())
                if ex in self._secrets:
                    held[ex] = (None, [])
            elif ex not in held:
                yield n, d
            elif kind == "response":
                held[ex] = (d, held[ex][1])
            elif kind == "end":
                count = yield from self._flush(ex, *held.pop(ex))
                yield n, self.end(End.from_json(d), count).to_json()
            else:  # a chunk, a session's frame
                held[ex][1].append((n, d))

    def finish(self) -> Iterator[_Line]:
        """The exchanges still held: the recording ends (so far) without their end."""
        held, self._held = self._held, {}
        for ex, (resp, body) in held.items():
            yield from self._flush(ex, resp, body)

    def _flush(
        self, ex: int, resp: dict[str, Any] | None, body: list[_Line]
    ) -> Generator[_Line, None, int]:
        """The exchange's response and reads (or frames), masked; returns how many were
        masked."""
        codings: list[str] = []
        if resp is not None:
            response = Response.from_json(resp)
            codings = content_codings(response.headers)
            yield 0, _as_read(self.response(response).to_json())
        chunks = [(n, Chunk.from_json(d)) for n, d in body if d.get("type") == "chunk"]
        reads, count = self.reads(ex, codings, [(c.data_bytes, c.t_ns) for _, c in chunks])
        for (n, _), (data, t) in zip(chunks, reads, strict=True):
            yield n, Chunk.of(ex, t, data).to_json()
        frames = [(n, Message.from_json(d)) for n, d in body if d.get("type") == "message"]
        if frames:
            secrets = self.secrets(ex)
            assert secrets is not None  # (only an exchange with some is held)
            lines, k = mask_frames(secrets, [m for _, m in frames])
            count += k
            for (n, _), line in zip(frames, lines, strict=True):
                yield n, line.to_json()
        return count


def mask_frames(secrets: Secrets, lines: list[Message]) -> tuple[list[Message], int]:
    """A session's frame lines with its credentials masked, each peer's frames as one
    body (mask_pieces), each line counting those masked in it; how many were."""
    out, total = list(lines), 0
    for sender in ("client", "server"):
        mine = [i for i, m in enumerate(lines) if m.sender == sender]
        pieces, counts = mask_pieces(secrets, [lines[i].data_bytes for i in mine])
        for i, piece, n in zip(mine, pieces, counts, strict=True):
            if n or piece != lines[i].data_bytes:
                out[i] = lines[i].holding(piece, n)
                total += n
    return out, total


def _as_read(d: dict[str, Any]) -> dict[str, Any]:
    """A line's dict as a recording's JSON reads: its headers as lists."""
    if "headers" in d:
        d["headers"] = [list(pair) for pair in d["headers"]]
    return d


class MaskedReads(Reads):
    """An exchange's reads as its FileMask masks them: read whole (once, and again when
    the recording grew), masked as one body, each read's length and time kept."""

    def __init__(self, inner: Reads, mask: FileMask, exchange: int, codings: list[str]) -> None:
        self.inner = inner
        self.mask = mask
        self.exchange = exchange
        self.codings = codings
        self.framing = inner.framing
        self._reads: list[tuple[bytes, int | None]] = []
        self._of = -1  # how many inner reads `_reads` was made of
        self.masked = 0  # values masked in them

    def _all(self) -> list[tuple[bytes, int | None]]:
        n = len(self.inner)
        if n != self._of:
            got = list(self.inner.reads_from(0, n))
            self._reads, self.masked = self.mask.reads(self.exchange, self.codings, got)
            self._of = n
        return self._reads

    def __len__(self) -> int:
        return len(self._all())

    def read(self, i: int) -> tuple[bytes, int | None]:
        return self._all()[i]

    def reads_from(self, start: int, stop: int) -> Iterator[tuple[bytes, int | None]]:
        yield from self._all()[start:stop]

    def close(self) -> None:
        self.inner.close()
