"""The credentials a request carried, masked wherever its exchange's recording holds them.

redact.py masks what names or shapes say is secret in headers, URLs and command lines.
This module goes further for one exchange: every credential its request carried (secret
header values, a Basic credential and what it decodes to, URL userinfo, secret query
values, secret-named JSON string fields of the body), in its plain, percent-encoded,
JSON-escaped and base64 forms, is masked in the whole exchange: its URL and headers, both
bodies, the response head and the end line's error. An upstream that echoes the key in
an error ("Incorrect API key provided: sk-proj-...") is recorded without it.

Bodies are recorded byte-exact, read by read with their times, so a masked body keeps its
length: each occurrence becomes `[REDACTED***]` (or `*`s, under 10 bytes) of its own
length, and every read keeps its boundaries and time. A secret split over two reads is
masked in both: a read whose end could begin a secret is held back (written, with its own
time, once the next read or the end says), never the bytes the client is given.
"""

from __future__ import annotations

import base64
import bisect
import itertools
import json
import re
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import field
from urllib.parse import quote, quote_plus, unquote, unquote_plus, urlsplit

from streamscope.core.codings import Inflow, request_body
from streamscope.http import sigv4
from streamscope.recording import pseudonym
from streamscope.recording.format import REDACTED
from streamscope.recording.redact import (
    _KEY_SHAPED,
    is_identifier_name,
    is_secret_header,
    is_secret_query_name,
    query_pairs,
    redact_argv,
    redact_header,
    redact_url,
)
from streamscope.recording.redact import redact_json as redact_paths

from ..core.record import record

# Shorter values are not looked for in bodies: "42" or "true" would mask the unrelated.
MIN_SECRET = 6
_HEAD = 4  # bytes of a form looked for as such when a read may end inside it
# characters of a credential an event's text may end with for the recorder to hold it
# until the next events' text says whether they complete it (split_cut)
_SPLIT_HEAD = 2
_SPLIT_HOLD = 1 << 16  # the most bytes held for it: a key no later event continues
_CONTEXT = 4096  # the bytes written a read is read after, for it (an event it continues)
_MASK_CHARS = frozenset(REDACTED + "*")
# Secret-named string fields of a JSON request body ("api_key": "...", "password": "...").
_JSON_SECRET = re.compile(
    rb'"([A-Za-z0-9_.-]*(?:api[-_]?key|apikey|secret|passw(?:or)?d|pwd|passphrase'
    rb"|access[-_]?token|refresh[-_]?token|id[-_]?token|auth[-_]?token|private[-_]?key"
    rb"|session[-_]?token|security[-_]?token|session[-_]?key"  # a session's id is no secret
    rb'|access[-_]?key|credential)s?)"\s*:\s*"((?:[^"\\]|\\.)*)"',
    re.IGNORECASE,
)


# Every string field of a JSON body, to find those an identifier's name names.
_JSON_STRING = re.compile(rb'"([A-Za-z0-9_.-]+)"\s*:\s*"((?:[^"\\]|\\.)*)"')
# The same, its value's loop unrolled (faster on long values): the text events assemble
_JSON_VALUE = re.compile(rb'"([A-Za-z0-9_.-]+)"\s*:\s*"([^"\\]*(?:\\.[^"\\]*)*)"')


def body_mask(n: int) -> bytes:
    """What n masked bytes are recorded as: the same length, ASCII that is safe inside a
    JSON string and an SSE line, so the body parses as before."""
    return b"[REDACTED" + b"*" * (n - 10) + b"]" if n >= 10 else b"*" * n


def credentials(url: str, headers: Iterable[tuple[str, str]], body: bytes = b"") -> list[str]:
    """Every credential a request carries, as text (see the module's docstring)."""
    found: list[str] = []
    for name, value in headers:
        found += _KEY_SHAPED.findall(value)
        if not is_secret_header(name):
            continue
        found.append(value.strip())
        found += sigv4.credentials(value)  # its key id and signature, each on its own
        scheme, _, rest = value.strip().partition(" ")
        if rest.strip():
            found.append(rest.strip())
            if scheme.lower() == "basic":
                found += _basic(rest.strip())
            if not scheme.upper().startswith("AWS4-"):  # SigV4's own parts: above
                found += _auth_params(rest)
        if "cookie" in name.lower():
            for part in value.split(";"):
                found.append(part.strip())
                cookie = part.partition("=")[2].strip()
                found += [cookie, _unquoted(cookie)]
    found += _in_url(url)
    for m in _JSON_SECRET.finditer(body):
        try:
            found.append(json.loads(b'"' + m.group(2) + b'"'))
        except ValueError:
            found.append(m.group(2).decode("utf-8", "replace"))
    return _usable(found)


def identifiers(url: str, headers: Iterable[tuple[str, str]], body: bytes = b"") -> list[str]:
    """The identifiers a request carries (redact.is_identifier_name: session, thread,
    conversation and request ids, cache keys) in its headers, query and JSON body's string
    fields: what --pseudonymize-ids replaces. A key-shaped value is no identifier."""
    found: list[str] = []
    for name, value in headers:
        if is_identifier_name(name) and not is_secret_header(name):
            found.append(value.strip())
    try:
        query = urlsplit(url).query
    except ValueError:
        query = ""
    for pair in query_pairs(query):
        name, eq, value = pair.partition("=")
        if eq and is_identifier_name(unquote_plus(name)):
            found.append(unquote_plus(value))
    for m in _JSON_STRING.finditer(body):
        if is_identifier_name(m.group(1).decode("ascii")):
            try:
                found.append(json.loads(b'"' + m.group(2) + b'"'))
            except ValueError:
                continue
    return [v for v in _usable(found) if not _KEY_SHAPED.search(v)]


def _basic(credential: str) -> list[str]:
    """What a Basic credential decodes to: "user:password", and the password (the user
    name when the password is empty: a token sent as the user, `curl -u TOKEN:`)."""
    try:
        pair = base64.b64decode(credential, validate=True).decode("utf-8")
    except ValueError:
        return []
    user, _, password = pair.partition(":")
    return [pair, password or user]


# An auth scheme's parameters: `Token token="…"`, `Digest …, response="…"`.
_AUTH_PARAM = re.compile(r"""([A-Za-z0-9_-]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^\s,]+)""")


def _auth_params(params: str) -> list[str]:
    """The values of the parameters whose names say they are secret, unquoted."""
    return [
        _unquoted(value)
        for name, value in _AUTH_PARAM.findall(params)
        if is_secret_query_name(name)
    ]


def _unquoted(value: str) -> str:
    """A quoted-string's content (RFC 9110 5.6.4), or `value` as it is."""
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return re.sub(r"\\(.)", r"\1", value[1:-1])
    return value


def _in_url(url: str) -> list[str]:
    found: list[str] = _KEY_SHAPED.findall(url) + _KEY_SHAPED.findall(unquote(url))
    try:
        parts = urlsplit(url)
    except ValueError:
        return found
    userinfo, at, _ = parts.netloc.rpartition("@")
    if at:
        found += [userinfo, unquote(userinfo), unquote(userinfo.partition(":")[2])]
    for pair in query_pairs(parts.query):
        name, eq, value = pair.partition("=")
        if eq and (is_secret_query_name(name) or _KEY_SHAPED.search(unquote_plus(value))):
            found += [value, unquote_plus(value)]
    return found


def _usable(values: Iterable[str]) -> list[str]:
    """Long enough to look for, not a mask already; each once."""
    out: dict[str, None] = {}
    for v in values:
        if len(v.strip()) >= MIN_SECRET and not set(v) <= _MASK_CHARS and REDACTED not in v:
            out[v] = None
    return list(out)


def forms(secret: str) -> set[bytes]:
    """The byte forms of a secret a body may hold: plain, percent-encoded, JSON-escaped,
    base64 (standard and URL-safe, padded or not)."""
    raw = secret.encode("utf-8", "surrogatepass")
    sp = "surrogatepass"  # a JSON body's "\ud800" is a str Python cannot encode otherwise
    texts = {secret, quote(secret, safe="", errors=sp), quote(secret, errors=sp)}
    texts.add(quote_plus(secret, errors=sp))
    texts |= {_PERCENT.sub(_lower, t) for t in texts}  # `%2f` as some encoders write `%2F`
    escaped = {json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1]}
    texts |= escaped | {t.replace("/", "\\/") for t in escaped}  # `\/` as PHP and Java write
    out = {t.encode("utf-8", "surrogatepass") for t in texts}
    for b64 in (base64.b64encode(raw), base64.urlsafe_b64encode(raw)):
        out |= {b64, b64.rstrip(b"=")}
    return {f for f in out if len(f) >= MIN_SECRET}


_PERCENT = re.compile(r"%[0-9A-F]{2}")


def _lower(m: re.Match[str]) -> str:
    return m.group().lower()


def _swap_forms(value: str, alias: str) -> dict[bytes, bytes]:
    """An identifier's forms (plain, percent-encoded, JSON-escaped) and its pseudonym's in
    each: the same length, as the pseudonym keeps each character's class."""
    pairs = [(value, alias), (quote(value, safe=""), quote(alias, safe=""))]
    pairs.append((json.dumps(value)[1:-1], json.dumps(alias)[1:-1]))
    out = {}
    for v, a in pairs:
        vb, ab = v.encode("utf-8", "surrogatepass"), a.encode("utf-8", "surrogatepass")
        if len(vb) == len(ab) and len(vb) >= MIN_SECRET:
            out[vb] = ab
    return out


class Secrets:
    """One exchange's credentials, ready to be found in its text and bytes; and, with
    `swaps` (identifier: its pseudonym), the identifiers to replace the same way, in
    the same pass. A match of a credential's form is masked (and counted); of an
    identifier's, replaced by its pseudonym's form of the same length (not counted)."""

    def __init__(self, values: Sequence[str], swaps: Mapping[str, str] | None = None) -> None:
        self.values = list(values)
        masks = {f for v in values for f in forms(v)}
        self._swaps: dict[bytes, bytes] = {}
        for value, alias in (swaps or {}).items():
            self._swaps.update(_swap_forms(value, alias))
        for f in masks:  # a credential's form is masked, whatever else it is
            self._swaps.pop(f, None)
        self._text_swaps = {
            k.decode("ascii"): v.decode("ascii") for k, v in self._swaps.items() if k.isascii()
        }
        self.forms = sorted(masks | set(self._swaps), key=len, reverse=True)
        # longest first: at one position the whole form is masked, not a shorter one
        self._bytes = re.compile(b"|".join(map(re.escape, self.forms))) if self.forms else None
        texts = sorted(
            {t for v in values for t in _text_forms(v)} | set(self._text_swaps),
            key=len,
            reverse=True,
        )
        self._text = re.compile("|".join(map(re.escape, texts))) if texts else None
        self.longest = max(map(len, self.forms), default=0)
        # how a credential split across events' text may begin (split_cut)
        self._split_heads = {v[:_SPLIT_HEAD].encode("utf-8", "surrogatepass") for v in values}
        # where a form may begin near the end of a read: its first _HEAD bytes (found at C
        # speed), or, closer to the end than that, one of its shorter prefixes
        self._heads: dict[bytes, list[bytes]] = {}
        for f in self.forms:
            self._heads.setdefault(f[:_HEAD], []).append(f)
        self._short = {f[:k] for f in self.forms for k in range(1, _HEAD)}
        self._short_ends = frozenset(p[-1] for p in self._short)
        # every position where a head begins, overlapping ones too (a lookahead)
        heads = b"|".join(map(re.escape, self._heads))
        self._head_at = re.compile(b"(?=(?:" + heads + b"))") if heads else None

    @classmethod
    def of_request(
        cls,
        url: str,
        headers: Sequence[tuple[str, str]],
        body: bytes,
        known: Iterable[str] = (),
        swaps: Mapping[str, str] | None = None,
    ) -> Secrets:
        """The credentials a request carried (and `known` ones learnt elsewhere)."""
        return cls(_usable([*known, *credentials(url, headers, body)]), swaps)

    def __bool__(self) -> bool:
        return self._bytes is not None

    def text(self, s: str) -> tuple[str, int]:
        """`s` with every credential replaced by [REDACTED], and how many were."""
        if self._text is None or not s:
            return s, 0
        if not self._text_swaps:
            return self._text.subn(REDACTED, s)
        n = 0

        def one(m: re.Match[str]) -> str:
            nonlocal n
            alias = self._text_swaps.get(m.group())
            if alias is not None:
                return alias
            n += 1
            return REDACTED

        return self._text.sub(one, s), n

    def body(self, data: bytes) -> tuple[bytes, int]:
        """A whole body with every credential masked, its length kept; how many were."""
        if self._bytes is None or not data:
            return data, 0
        out, starts = self.whole(data)
        return bytes(out), len(starts)

    def whole(self, data: bytes) -> tuple[bytearray, list[int]]:
        """A whole body masked (each form; then each credential split across the text of
        consecutive events, split_spans), and where each masked credential begins."""
        out, starts, at = bytearray(), [], 0
        for m in self._bytes.finditer(data) if self._bytes is not None else ():
            out += data[at : m.start()]
            alias = self._swaps.get(m.group())
            if alias is None:
                starts.append(m.start())
            out += alias if alias is not None else body_mask(m.end() - m.start())
            at = m.end()
        out += data[at:]
        for spans in split_spans(self.values, bytes(out)):
            out = mask_spans(out, spans)
            starts.append(spans[0][0])
        return out, starts

    def may_split(self, data: bytes) -> bool:
        """Whether `data` may hold the start of a credential split across the text of
        consecutive events (the first characters of one: then split_cut says)."""
        return any(head in data for head in self._split_heads)

    def clean(self, data: bytes) -> bool:
        """True when data holds no form and its end can begin none: the common read, told
        by a few substring tests (every form holds its head) instead of a regex scan."""
        for head in self._heads:
            if head in data:
                return False
        if data and data[-1] in self._short_ends:
            tail = data[-(_HEAD - 1) :]
            return not any(tail[i:] in self._short for i in range(len(tail)))
        return True

    def scan_at(self, data: bytes) -> tuple[bytearray, list[int], int]:
        """(data masked, where each masked credential begins (a swapped identifier is not
        counted), where a possible secret begins that the end cuts off, or len(data)): the
        start of the held-back part of a streamed body."""
        out, last = bytearray(data), 0
        matches = list(self._bytes.finditer(data)) if self._bytes is not None else []
        # a form that reaches the end may be the start of a longer one (base64 and its
        # padding): it is decided by the reads to come
        while matches and self._begins(data, matches[-1].start()):
            matches.pop()
        starts = []
        for m in matches:
            alias = self._swaps.get(m.group())
            if alias is None:
                starts.append(m.start())  # a credential masked: counted
            out[m.start() : m.end()] = body_mask(m.end() - m.start()) if alias is None else alias
            last = m.end()
        return out, starts, self._cut_off(data, last)

    def scan_held(self, data: bytes, final: int) -> tuple[bytearray, list[int], int]:
        """As `scan_at`, for held reads whose first `final` bytes are done (masked, or a
        pseudonym swapped in, before the last cut): only the rest is scanned, so nothing
        is replaced twice (an id's prefix and its pseudonym's first byte may spell the id
        again)."""
        out, starts, cut = self.scan_at(data[final:])
        return bytearray(data[:final]) + out, [final + s for s in starts], final + cut

    def _begins(self, data: bytes, i: int) -> bool:
        """Whether data[i:] is a proper prefix of a form: cut off by the end of data."""
        rest = data[i:]
        if len(rest) < _HEAD:
            return rest in self._short
        return any(
            len(f) > len(rest) and f.startswith(rest) for f in self._heads.get(rest[:_HEAD], ())
        )

    def _cut_off(self, data: bytes, start: int) -> int:
        """The first position >= start from which data's end is a proper prefix of a form."""
        start = max(start, len(data) - self.longest + 1, 0)
        best = len(data)
        if self._head_at is not None:
            for m in self._head_at.finditer(data, start):
                if self._begins(data, m.start()):
                    return m.start()
        for i in range(max(start, len(data) - _HEAD + 1), best):  # the last few bytes
            if data[i:] in self._short:
                return i
        return best


def _json_chars(raw: bytes, base: int) -> tuple[str, list[int]]:
    """A JSON string's content (its bytes between the quotes, at `base` in the body)
    decoded, and where each of its characters begins in the body (one more: its end)."""
    chars: list[str] = []
    at: list[int] = []
    i, n = 0, len(raw)
    while i < n:
        at.append(base + i)
        b = raw[i]
        if b == 0x5C and i + 1 < n:  # a backslash escape
            if raw[i + 1] == 0x75 and i + 6 <= n:  # \uXXXX, a surrogate pair as one
                step = 12 if raw[i + 6 : i + 8] == b"\\u" and i + 12 <= n else 6
            else:
                step = 2
            try:
                chars.append(json.loads(b'"' + raw[i : i + step] + b'"'))
            except ValueError:
                chars.append("\ufffd")
            if len(chars[-1]) > 1:  # (an escaped pair that was not one: each its own)
                step, chars[-1] = 6, json.loads(b'"' + raw[i : i + 6] + b'"')
        else:
            step = 1 if b < 0xC0 else 2 if b < 0xE0 else 3 if b < 0xF0 else 4
            chars.append(raw[i : i + step].decode("utf-8", "replace")[:1])
        i += step
    at.append(base + n)
    return "".join(chars), at


def _string(raw: bytes) -> str:
    """A JSON string's content decoded (at C speed; _json_chars where it is no JSON)."""
    try:
        text = json.loads(b'"' + raw + b'"')
    except ValueError:
        return _json_chars(raw, 0)[0]
    return text if isinstance(text, str) else ""


def _assembled(data: bytes, least: int = 2) -> list[tuple[str, list[re.Match[bytes]]]]:
    """Each key's JSON string values in `data`, decoded and joined in order (the content
    or arguments a client assembles from consecutive events), with the values' matches;
    of the keys with `least` values or more, or with an escape (`\\u0073` is an `s` no
    form of a credential spells)."""
    by_key: dict[bytes, list[re.Match[bytes]]] = {}
    for m in _JSON_VALUE.finditer(data):
        by_key.setdefault(m.group(1), []).append(m)
    return [
        ("".join(_string(m.group(2)) for m in values), values)
        for values in by_key.values()
        if len(values) >= least or _escaped(values)
    ]


def _escaped(values: list[re.Match[bytes]]) -> bool:
    return any(b"\\" in m.group(2) for m in values)


def _offsets(values: list[re.Match[bytes]]) -> tuple[list[int], list[int]]:
    """Where each character of the values' joined text begins and ends in the body."""
    where: list[int] = []
    ends: list[int] = []
    for m in values:
        text, at = _json_chars(m.group(2), m.start(2))
        where += at[: len(text)]
        ends += at[1 : len(text) + 1]
    return where, ends


def split_spans(
    secrets: Sequence[str],
    data: bytes,
    assembled: list[tuple[str, list[re.Match[bytes]]]] | None = None,
) -> list[list[tuple[int, int]]]:
    """Where `data` holds a credential split across the text of consecutive events: a
    model that echoes a key token by token sends `"text": "echo sk"`, then `"text":
    "-proj-..."`. Found in the assembled text of each key's values (_assembled), it is
    masked in each value it spans: for each one found, the (start, end) byte spans of its
    pieces."""
    if not secrets or b'"' not in data:
        return []
    found: list[list[tuple[int, int]]] = []
    for text, values in _assembled(data) if assembled is None else assembled:
        if len(values) < 2 and not _escaped(values):
            continue
        for secret in secrets:
            start = text.find(secret)
            if start < 0:
                continue
            where, ends = _offsets(values)  # (only where one is found)
            if len(where) != len(text):  # (a value no JSON decoder reads the same way)
                continue
            while start >= 0:
                found.append(_pieces(where, ends, start, start + len(secret) - 1))
                start = text.find(secret, start + len(secret))
    return found


def split_cut(
    secrets: Sequence[str],
    data: bytes,
    assembled: list[tuple[str, list[re.Match[bytes]]]] | None = None,
) -> int:
    """The first byte from which the end of `data` may begin a credential the next events'
    text completes: where some key's assembled text ends with a proper prefix of one, of
    _SPLIT_HEAD characters or more (len(data): nowhere)."""
    best = len(data)
    for text, values in _assembled(data, 1) if assembled is None else assembled:
        for secret in secrets:
            for k in range(min(len(secret) - 1, len(text)), _SPLIT_HEAD - 1, -1):
                if text.endswith(secret[:k]):
                    best = min(best, _start_of_tail(values, k))
                    break
    return best


def _start_of_tail(values: list[re.Match[bytes]], k: int) -> int:
    """Where the last `k` characters of the values' joined text begin in the body: in
    the value that holds the first of them (the start of that value, when its characters
    cannot be told apart)."""
    for m in reversed(values):
        text, at = _json_chars(m.group(2), m.start(2))
        if len(text) >= k:
            return at[len(text) - k]
        k -= len(text)
    return values[0].start(2)


def _pieces(where: list[int], ends: list[int], first: int, last: int) -> list[tuple[int, int]]:
    """The byte spans characters first..last take, one per run of adjacent ones."""
    out: list[tuple[int, int]] = []
    for k in range(first, last + 1):
        if out and out[-1][1] == where[k]:
            out[-1] = (out[-1][0], ends[k])
        else:
            out.append((where[k], ends[k]))
    return out


def mask_spans(data: bytes | bytearray, spans: Iterable[tuple[int, int]]) -> bytearray:
    """`data` with each span masked (body_mask: the same length, JSON- and SSE-safe)."""
    out = bytearray(data)
    for a, b in spans:
        out[a:b] = body_mask(b - a)
    return out


def mask_pieces(secrets: Secrets, pieces: list[bytes]) -> tuple[list[bytes], list[int]]:
    """`pieces` (one body's reads, or one peer's payloads, in order) with every credential
    masked as a recording's writer masks a body's reads: as one body, so a credential
    split over two pieces is masked in both, and one split across the text of consecutive
    events too (split_spans), every length kept; and how many began in each piece."""
    counts = [0] * len(pieces)
    if not secrets or not pieces:
        return pieces, counts
    starts = list(itertools.accumulate(map(len, pieces), initial=0))
    out, found = secrets.whole(b"".join(pieces))
    for i in found:
        counts[bisect.bisect_right(starts, i) - 1] += 1
    return [bytes(out[starts[k] : starts[k + 1]]) for k in range(len(pieces))], counts


def _text_forms(secret: str) -> set[str]:
    """The forms a URL, a header or an error may hold (text: the ASCII ones)."""
    return {f.decode("utf-8", "surrogatepass") for f in forms(secret) if f.isascii()} | {secret}


@record(slots=True)
class BodyStream:
    """A body masked as it streams: reads come in, reads ready to be written go out, each
    with its own time and length; `count` says how many credentials were masked. (A
    WebSocket peer's frames are its reads too, each tagged with its frame: FrameMask.)"""

    secrets: Secrets
    pending: list[tuple[int, bytes]] = field(default_factory=list)
    count: int = 0
    done: int = 0  # how many bytes of the pending reads are final (before the last cut)
    written: bytes = b""  # the last bytes written (_CONTEXT at most): what reads continue
    hits: list[int] = field(default_factory=list)  # credentials begun in each pending read

    def quiet(self, data: bytes) -> bool:
        """Whether `data` can be written as it is, now: nothing is held, and it holds no
        credential, nor could begin one the next reads complete."""
        secrets = self.secrets
        joint = self.written[-1:] + data[:1]  # (a credential's first two split by reads)
        return (
            not self.pending
            and secrets.clean(data)
            and not secrets.may_split(data)
            and not secrets.may_split(joint)
        )

    def feed(self, t_ns: int, data: bytes) -> list[tuple[int, bytes]]:
        if self.quiet(data):  # the proxy's hot path: no tagged list built and copied
            self.written = (self.written + data)[-_CONTEXT:]
            return [(t_ns, data)]
        return [(t, d) for t, d, _ in self.tagged(t_ns, data)]

    def tagged(self, tag: int, data: bytes) -> list[tuple[int, bytes, int]]:
        """As feed: each read given back with its tag (its time, or its frame's place) and
        how many credentials began in it."""
        if self.quiet(data):
            self.written = (self.written + data)[-_CONTEXT:]
            return [(tag, data, 0)]  # the proxy's hot path
        self.pending.append((tag, data))
        self.hits.append(0)
        whole = b"".join(d for _, d in self.pending)
        masked, starts, held = self.secrets.scan_held(whole, self.done)
        if self.secrets.may_split(self.written[-_SPLIT_HEAD:] + whole):
            masked, held = self._split(masked, starts, held)
        self.count += len(starts)
        starts.sort()
        ready: list[tuple[int, bytes, int]] = []
        keep: list[tuple[int, bytes]] = []
        kept: list[int] = []
        at = gone = i = 0
        for (t, d), n in zip(self.pending, self.hits, strict=True):
            end = at + len(d)
            while i < len(starts) and starts[i] < end:  # a match counts in its first read
                n, i = n + 1, i + 1
            piece = bytes(masked[at:end])  # masked before the cut: final
            at = end
            if at <= held and not keep:
                ready.append((t, piece, n))
                self.written = (self.written + piece)[-_CONTEXT:]
                gone = at
            else:
                keep.append((t, piece))
                kept.append(n)
        self.pending, self.hits, self.done = keep, kept, held - gone
        return ready

    def _split(self, masked: bytearray, starts: list[int], held: int) -> tuple[bytearray, int]:
        """A key echoed token by token, across events (split_spans, split_cut), looked for
        in the pending bytes read after the last bytes written (the events they continue:
        a read may begin inside one): masked where it is pending, held where the pending
        end may begin one."""
        context = len(self.written)
        both = self.written + bytes(masked)
        assembled = _assembled(both, 1)
        for spans in split_spans(self.secrets.values, both, assembled):
            mine = [(max(a - context, 0), b - context) for a, b in spans if b > context]
            if mine:  # (what was written is: a piece of two characters or less)
                masked = mask_spans(masked, mine)
                starts.append(mine[0][0])
        # (the text masked just now is looked at as it was: a prefix it ends with is held)
        cut = max(split_cut(self.secrets.values, both, assembled) - context, 0)
        if len(masked) - cut <= _SPLIT_HOLD:  # (bounded: never the whole body held)
            held = min(held, cut)
        return masked, held

    def finish(self) -> list[tuple[int, bytes]]:
        """The reads still held: nothing follows, so no secret completes them."""
        return [(t, d) for t, d, _ in self.finish_tagged()]

    def finish_tagged(self) -> list[tuple[int, bytes, int]]:
        ready = [(t, d, n) for (t, d), n in zip(self.pending, self.hits, strict=True)]
        self.pending, self.hits, self.done = [], [], 0
        return ready


@record(slots=True)
class HeldFrame:
    """A WebSocket frame on its way to the recording: its payload once masked (None while
    held), how many values were masked in it, and the writer's own fields."""

    t_ns: int
    fields: object
    payload: bytes | None = None
    masked: int = 0


class FrameMask:
    """A WebSocket session's frames, masked like a body's reads and let out in the order
    they were given. Each peer's data frames (text, binary, continuations) are masked as
    one body (BodyStream): a credential split over two frames of a message, or across the
    text of consecutive messages (a Realtime delta per message), is masked in each; a
    control frame's payload (close, ping, pong) on its own. While a frame is held (its end
    could begin a credential the peer's next frame completes), the frames after it, either
    way, wait behind it: the recording keeps the order the relay saw."""

    __slots__ = ("secrets", "queue", "peers", "waiting", "seq")

    def __init__(self, secrets: Secrets) -> None:
        self.secrets = secrets
        self.queue: deque[HeldFrame] = deque()
        self.peers: dict[str, BodyStream] = {}  # by sender: its data frames, as one body
        self.waiting: dict[int, HeldFrame] = {}  # a peer's held frames, by their tag
        self.seq = 0

    def clean(self, sender: str, opcode: int, fin: bool, data: bytes) -> bool:
        """True when the frame can be written as it is, now: nothing waits, it is a
        message of its own, and it holds no credential nor could begin one."""
        if self.queue or not fin or opcode not in (1, 2):
            return False
        peer = self.peers.get(sender)
        if peer is None:
            peer = self.peers[sender] = BodyStream(self.secrets)
        if not peer.quiet(data):
            return False
        peer.written = (peer.written + data)[-_CONTEXT:]  # (what the next frames continue)
        return True

    def feed(
        self, sender: str, opcode: int, fin: bool, frame: HeldFrame, data: bytes
    ) -> list[HeldFrame]:
        self.queue.append(frame)
        if opcode in (0, 1, 2):
            peer = self.peers.get(sender)
            if peer is None:
                peer = self.peers[sender] = BodyStream(self.secrets)
            self.seq += 1
            self.waiting[self.seq] = frame
            self._let_out(peer.tagged(self.seq, data))
        else:
            frame.payload, frame.masked = self.secrets.body(data)
        return self._ready()

    def _let_out(self, pieces: list[tuple[int, bytes, int]]) -> None:
        for tag, piece, n in pieces:
            frame = self.waiting.pop(tag)
            frame.payload, frame.masked = piece, n

    def _ready(self) -> list[HeldFrame]:
        out = []
        queue = self.queue
        while queue and queue[0].payload is not None:
            out.append(queue.popleft())
        return out

    def finish(self) -> list[HeldFrame]:
        """Every frame still held: the session ended, nothing completes them."""
        for peer in self.peers.values():
            self._let_out(peer.finish_tagged())
        return self._ready()

    @property
    def pending(self) -> bool:
        return bool(self.queue)


# What a request body --redact-json cannot read (its Content-Encoding cannot be undone)
# is recorded as: never the body, which may decode in part to the fields in clear.
WITHHELD = (
    b"[REDACTED: a request body whose Content-Encoding cannot be decoded, "
    b"so --redact-json could not be applied]"
)


@record(slots=True)
class RecordedRequest:
    """A request as a recording keeps it: `body` the bytes sent, unless masking or
    --redact-json changed what they decode to; then the body decoded and changed, and
    `decoded` the Content-Encoding codings undone (the line's `body_decoded`)."""

    url: str
    headers: list[tuple[str, str]]
    body: bytes
    masked: int
    decoded: list[str] | None = None
    redacted: int = 0  # values --redact-json replaced (1: the whole body, withheld)
    # why the body could not be decoded ("": it could): then it is kept as sent, masked
    # where a credential's bytes stand as such, or withheld under --redact-json
    undecodable: str = ""


def mask_request(
    masking: Masking | None,
    exchange: int,
    url: str,
    headers: Sequence[tuple[str, str]],
    body: bytes,
    known: Sequence[str] = (),
    redact_json: Sequence[str] = (),
    stored: Sequence[str] | None = None,
) -> RecordedRequest:
    """What a recording keeps of a request: masked (`masking`, None: not) and redacted by
    path, both on what its body decodes to (`stored`: the codings already undone, for a
    body kept decoded). A compressed body is kept as it was sent while neither changes
    what it decodes to: the recording stays the client's bytes wherever it can."""
    readable = request_body(headers, body, stored)
    data = readable.data if readable.decoded else body
    pairs = list(headers)
    n = redacted = 0
    if masking is not None:  # first: its credentials are looked for everywhere
        url, pairs, data, n = masking.request(exchange, url, pairs, data, known)
    if redact_json:
        data, redacted = redact_paths(data, redact_json)
    why = readable.describe()
    if readable.failure is not None and redact_json:
        # what --redact-json cannot read may still decode in part (a cut gzip body): the
        # fields asked for would be in clear, so the body is withheld, and said to be
        return RecordedRequest(url, pairs, WITHHELD, n, redacted=1, undecodable=why)
    if not readable.decoded:
        return RecordedRequest(url, pairs, data, n, redacted=redacted, undecodable=why)
    if stored is None and data == readable.data:
        return RecordedRequest(url, pairs, body, n)  # nothing changed: the bytes sent
    return RecordedRequest(url, pairs, data, n, list(readable.codings), redacted)


class Masking:
    """What one recording masks, exchange by exchange: the one place every writer of a
    recording (RecordingWriter, so record, proxy, recording_transport and the pytest
    plugin; and export) masks secrets. Counts say how many values were masked."""

    def __init__(self, pseudonymize: bool = False) -> None:
        # --pseudonymize-ids: every identifier seen so far, by its pseudonym (pseudonym.py)
        self._key = pseudonym.new_key() if pseudonymize else None
        self._ids: dict[str, str] = {}
        self._secrets: dict[int, Secrets] = {}
        self._bodies: dict[int, BodyStream] = {}
        self._frames: dict[int, FrameMask] = {}  # a WebSocket session's frames
        self.seen: dict[str, None] = {}  # every credential masked so far, in order

    def request(
        self,
        exchange: int,
        url: str,
        headers: Sequence[tuple[str, str]],
        body: bytes,
        known: Sequence[str] = (),
    ) -> tuple[str, list[tuple[str, str]], bytes, int]:
        """The request as recorded (URL, headers, body) and how many values were masked.
        `known`: credentials learnt elsewhere (a HAR's, before its reader masked them)."""
        swaps = None
        if self._key is not None:
            for value in identifiers(url, headers, body):
                self._alias(value)
            swaps = dict(self._ids)  # this exchange's, and every earlier one's it may echo
        secrets = Secrets.of_request(url, headers, body, known, swaps)
        self._secrets[exchange] = secrets
        self.seen.update(dict.fromkeys(secrets.values))
        if secrets:
            self._bodies[exchange] = BodyStream(secrets)
        n = 0
        masked_url = redact_url(url)
        n += _added(url, masked_url)
        masked_url, k = secrets.text(masked_url)
        n += k
        pairs, k = self.headers(exchange, headers)
        body, j = secrets.body(body)
        return masked_url, pairs, body, n + k + j

    def secrets(self, exchange: int) -> Secrets | None:
        """The credentials of an exchange whose request was masked (until its end)."""
        return self._secrets.get(exchange)

    def headers(
        self, exchange: int, headers: Iterable[tuple[str, str]]
    ) -> tuple[list[tuple[str, str]], int]:
        """Headers as recorded: redact.py's masks, then the exchange's credentials."""
        _, out, n = mask_head(None, headers)
        if self._key is not None:  # a response's own ids (x-request-id) too
            for i, (name, value) in enumerate(out):
                if value in self._ids or (
                    is_identifier_name(name) and identifiers("", [(name, value)]) == [value]
                ):
                    out[i] = (name, self._alias(value))
        secrets = self._secrets.get(exchange)
        if secrets is not None:
            for i, (name, value) in enumerate(out):
                value, k = secrets.text(value)
                out[i], n = (name, value), n + k
        return out, n

    def text(self, s: str) -> str:
        """`s` (a line the recorder says) with every credential masked so far masked."""
        return Secrets(list(self.seen)).text(s)[0] if self.seen else s

    def _alias(self, value: str) -> str:
        """The identifier's pseudonym, the same for the whole recording."""
        assert self._key is not None
        alias = self._ids.get(value)
        if alias is None:
            alias = self._ids[value] = pseudonym.pseudonym(self._key, value)
        return alias

    def chunk(self, exchange: int, t_ns: int, data: bytes) -> list[tuple[int, bytes]] | None:
        """The reads ready to be written (held back reads come out later), or None when
        the exchange has nothing to mask: write `data` as it is."""
        body = self._bodies.get(exchange)
        return None if body is None else body.feed(t_ns, data)

    def message(
        self,
        exchange: int,
        sender: str,
        opcode: int,
        fin: bool,
        t_ns: int,
        fields: object,
        data: bytes,
    ) -> list[HeldFrame] | None:
        """A WebSocket frame, masked like a body's read (FrameMask): the frames ready to be
        written, in the order they came, or None when this one is to be written as it is
        now (the exchange has nothing to mask, or the frame nothing masked nor held)."""
        secrets = self._secrets.get(exchange)
        if not secrets:
            return None
        frames = self._frames.get(exchange)
        if frames is None:
            frames = self._frames[exchange] = FrameMask(secrets)
        if frames.clean(sender, opcode, fin, data):  # the common frame
            return None
        return frames.feed(sender, opcode, fin, HeldFrame(t_ns, fields), data)

    def end_messages(self, exchange: int) -> list[HeldFrame]:
        """The session's frames still held at its end, in the order they came."""
        frames = self._frames.pop(exchange, None)
        return [] if frames is None else frames.finish()

    def end(
        self, exchange: int, error: str | None
    ) -> tuple[list[tuple[int, bytes]], str | None, int]:
        """The reads still held, the end's error masked, and how many values were masked
        in the body and the error; the exchange is forgotten."""
        body = self._bodies.pop(exchange, None)
        secrets = self._secrets.pop(exchange, None)
        held = body.finish() if body is not None else []
        n = body.count if body is not None else 0
        if secrets is not None and error is not None:
            error, k = secrets.text(error)
            n += k
        return held, error, n

    def compressed(
        self, exchange: int, codings: Sequence[str], reads: list[tuple[int, bytes]]
    ) -> tuple[list[tuple[int, bytes]], int]:
        """A compressed body's reads as recorded, whole (the writer holds them to its end):
        as they came when no credential is in what they decode to; else decoded and
        masked (mask_pieces), each at its read's time: an upstream that compresses an
        error though asked for identity, echoing the key, holds it where no byte matches
        it. How many were masked (0: the reads as they came)."""
        secrets = self._secrets.get(exchange)
        if not secrets or not reads:
            return reads, 0
        inflow = Inflow(codings)
        decoded = [inflow.feed(data) for _, data in reads]
        pieces, counts = mask_pieces(secrets, decoded)
        if not sum(counts):
            return reads, 0
        return [(t, p) for (t, _), p in zip(reads, pieces, strict=True)], sum(counts)

    def open_exchanges(self) -> list[int]:
        """Exchanges that have reads held back (to be written before the file closes)."""
        # a copy first: another thread's exchange may start meanwhile
        bodies = [x for x, body in list(self._bodies.items()) if body.pending]
        frames = [x for x, held in list(self._frames.items()) if held.pending]
        return sorted(set(bodies + frames))


def mask_head(
    url: str | None, headers: Iterable[tuple[str, str]]
) -> tuple[str | None, list[tuple[str, str]], int]:
    """A URL and headers masked by name and shape alone (no exchange to learn from: a
    HAR's as it is read), and how many values were masked."""
    shown = redact_url(url) if url is not None else None
    n = _added(url, shown) if url is not None and shown is not None else 0
    out = []
    for name, value in headers:
        masked = redact_header(name, value)
        n += _added(value, masked) or int(masked != value)
        out.append((name, masked))
    return shown, out, n


def _added(before: str, after: str) -> int:
    """How many [REDACTED] masks `after` has that `before` had not."""
    return max(after.count(REDACTED) - before.count(REDACTED), 0)


def mask_argv(argv: Sequence[str]) -> tuple[list[str], int]:
    """The recorded command line (redact.redact_argv) and how many words were masked."""
    out = redact_argv(argv)
    return out, sum(a != b for a, b in zip(argv, out, strict=True))


def argv_credentials(argv: Sequence[str] | None) -> list[str]:
    """What the recorder's command-line rules (mask_argv) mask in `argv`: each masked
    word's part in clear (the whole word, or what follows `--api-key=`)."""
    if not argv:
        return []
    masked, _ = mask_argv(argv)
    found: list[str] = []
    for word, shown in zip(argv, masked, strict=True):
        if word == shown:
            continue
        pattern = "(.+?)".join(map(re.escape, shown.split(REDACTED)))
        m = re.fullmatch(pattern, word, re.DOTALL)
        found += [g for g in m.groups() if g] if m is not None else [word]
    return found
