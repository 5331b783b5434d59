"""Redaction applied at write time, so secrets never reach the recording's bytes."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any
from urllib.parse import unquote_plus

from streamscope.http import sigv4
from streamscope.recording.format import REDACTED, Headers

SECRET_HEADERS = frozenset(
    {
        "authorization",
        "authentication",
        "api-key",
        "x-api-key",
        "cookie",
        "set-cookie",
        "openai-organization",
        "openai-project",
        # Anthropic's account identifiers, masked as OpenAI's organization and project are
        # (`anthropic-version` and `anthropic-beta` name the API, and stay readable).
        "anthropic-organization-id",
        "anthropic-workspace-id",
        "proxy-authorization",
    }
)

# Any header whose name says it carries a credential: *auth* (authorization,
# authentication, x-auth-token), *-key (x-goog-api-key, ocp-apim-subscription-key),
# *-token, *-secret, cookies, sessions (not a session's id: is_identifier_name), passwords,
# signatures.
_SECRET_NAME = re.compile(
    r"auth|key|token|secret|passw|credential|signature|session|cookie|pwd"
    r"|(?<![a-z])pass(?![a-z])",  # x-api-pass, not x-passthrough
    re.IGNORECASE,
)
# Names that say "key" or "tokens" but hold no credential: counters (x-ratelimit-remaining-tokens,
# anthropic-ratelimit-input-tokens-limit, anthropic-priority-output-tokens-remaining).
_COUNTER_NAME = re.compile(r"ratelimit|^anthropic-priority-|^sec-websocket-")
# (and the WebSocket handshake's Sec-WebSocket-Key / -Accept: a nonce and its hash, no
# credential: kept, so the handshake reads as it was)
# Query parameter names (percent-decoded first) that carry credentials.
_SECRET_QUERY_NAME = re.compile(
    r"key|token|secret|passw|signature|sig|auth|credential|session|pwd"
    r"|(?<![a-z])pass(?![a-z])|^code$",  # an OAuth authorization code
    re.IGNORECASE,
)
# Identifiers, not credentials: what a client calls its session, thread, conversation or
# request, and the key its prompt cache (or a retry's idempotency) is looked up by:
# Codex's `session_id`, `thread-id`, `conversation_id`, `prompt_cache_key`, Claude Code's
# `x-claude-code-session-id`, opencode's `x-session-affinity` (its session id again, for a
# load balancer's stickiness), the SDKs' `Idempotency-Key`. The client makes them up to
# name its own work; they open nothing, and kept they match a recording to the agent's
# own logs. The name's last words say it: `<subject> id` (or `affinity`) or
# `<cache|idempotency> key`, no other word of it naming a credential (`x-auth-session-id` stays masked). A session
# *token* (`x-amz-security-token`, `session_token`, `AWS_SESSION_TOKEN`) or a session
# *key* (a `sessionKey` cookie) authenticates: masked, as every token and key is.
_ID_SUBJECTS = frozenset({"session", "thread", "conversation", "request"})
_ID_WORDS = frozenset({"id", "ids", "uuid", "affinity"})
_KEY_SUBJECTS = frozenset({"cache", "idempotency"})
_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")  # kebab, snake and camelCase words


def is_identifier_name(name: str) -> bool:
    """Whether a header, query parameter or option `name` names an identifier (above):
    its value is kept, unless its shape says it is a key."""
    words = [w.lower() for w in _WORD.findall(name)]
    if len(words) < 2:
        return False
    subject, last = words[-2], words[-1]
    if not (
        (last in _ID_WORDS and subject in _ID_SUBJECTS)
        or (last == "key" and subject in _KEY_SUBJECTS)
    ):
        return False
    return not any(_SECRET_NAME.search(w) for w in words[:-2])


def is_secret_query_name(name: str) -> bool:
    """Whether query parameter `name` (percent-encoded as sent) carries a credential."""
    name = unquote_plus(name)
    return _SECRET_QUERY_NAME.search(name) is not None and not is_identifier_name(name)


# Values that are keys whatever they are called: OpenAI- and Anthropic-style (`sk-…`, at the
# start of a word: `task-budgets-2026-03-13` in anthropic-beta is no key), Google, JWT,
# GitHub, Slack, AWS access key ids (AKIA..., ASIA...: in a SigV4 credential scope, a
# presigned URL's X-Amz-Credential, an error that names the key).
_KEY_SHAPED = re.compile(
    r"(?<![A-Za-z0-9])sk-[A-Za-z0-9_\-]{6,}|AIza[0-9A-Za-z_\-]{20,}|eyJ[\w-]+\.[\w-]+\.[\w-]+"
    r"|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|xox[a-z]-[A-Za-z0-9-]{10,}"
    r"|" + sigv4.ACCESS_KEY_ID
)
# scheme://userinfo@ in a URL: a password (or a token as the user name).
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/?#@\s]+@")


def redact_url(url: str) -> str:
    """The URL with its userinfo, credential-looking query values and key-shaped words
    (in its path too) masked."""
    if "@" in url:
        url = _USERINFO.sub(lambda m: m.group(1) + REDACTED + "@", url)
    path, sep, rest = url.partition("?")
    path = _KEY_SHAPED.sub(REDACTED, path)
    if not sep:
        return path
    query, hash_, fragment = rest.partition("#")
    return path + "?" + _redact_query(query) + hash_ + _KEY_SHAPED.sub(REDACTED, fragment)


# A query's pairs are split at `&` and at `;` (which some servers read as `&`: a key
# after `;` must not hide in the pair before it).
_QUERY_SEPARATOR = re.compile(r"([&;])")


def query_pairs(query: str) -> list[str]:
    """The `name=value` pairs of a URL's query, as sent."""
    return _QUERY_SEPARATOR.split(query)[::2]


def _redact_query(query: str) -> str:
    parts = _QUERY_SEPARATOR.split(query)  # pairs, with the separators between them
    for i in range(0, len(parts), 2):
        name, eq, value = parts[i].partition("=")
        if eq and (is_secret_query_name(name) or _KEY_SHAPED.search(unquote_plus(value))):
            parts[i] = name + "=" + REDACTED
    return "".join(parts)


def is_secret_header(name: str) -> bool:
    """Whether header `name` (case-insensitive) carries a credential: its value is masked."""
    lname = name.lower()
    return lname in SECRET_HEADERS or (
        _SECRET_NAME.search(lname) is not None
        and _COUNTER_NAME.search(lname) is None
        and not is_identifier_name(name)
    )


def redact_text(text: str) -> str:
    """Free text (a line a recorded program wrote) with every key-shaped word masked."""
    return _KEY_SHAPED.sub(REDACTED, text)


def redact_header(name: str, value: str) -> str:
    """The value to record for header `name` (case-insensitive)."""
    if not is_secret_header(name):
        return _KEY_SHAPED.sub(REDACTED, value)
    # AWS SigV4: the key id and the signature masked; the scope's date, region and
    # service and the signed header names kept, as they help debugging
    signed = sigv4.masked(value, REDACTED) if "auth" in name.lower() else None
    if signed is not None:
        return signed
    if "auth" in name.lower():  # "<scheme> <credentials>": the scheme helps debugging, not secret
        scheme, sep, rest = value.strip().partition(" ")
        if sep and rest.strip() and scheme.replace("-", "").isalnum():
            return f"{scheme} {REDACTED}"
    return REDACTED


def redact_headers(headers: Iterable[tuple[str, str]]) -> Headers:
    """Headers with secret values replaced; order and duplicates kept."""
    return [(name, redact_header(name, value)) for name, value in headers]


# Key-shaped words in a command line: OpenAI-style keys, bearer tokens, key=value flags.
_ARGV_SECRET = re.compile(
    r"((?<![A-Za-z0-9])sk-[A-Za-z0-9_\-]{6,})|((?:Bearer|Basic)\s+)[^\s'\"]+|((?:api[-_]?key|key|token|secret|password)=)[^\s'\"&;]+",
    re.IGNORECASE,
)


# An option whose name says it takes a secret (--api-key, --token, --password, --pass,
# --db-pwd, --key, --client-secret, --auth...): its value, after "=" or as the next word, is masked
# whatever it looks like.
_SECRET_OPTION = re.compile(
    r"(-{1,2}[\w.-]*?(?:key|token|secret|passw|pwd|credential|auth|(?<![a-z])pass(?![a-z]))"
    r"[\w.-]*?)(=.*)?",
    re.IGNORECASE | re.DOTALL,
)


_NAME_END = re.compile(r"[\w.-]*\Z")


def _argv_secret(m: re.Match[str]) -> str:
    named = m.group(3)
    if named is not None:  # the whole name the "key=" ends: -c prompt_cache_key=... is kept
        before = _NAME_END.search(m.string, 0, m.start())
        if is_identifier_name((before.group() if before else "") + named[:-1]):
            return m.group(0)
    return (m.group(2) or named or "") + REDACTED


# What an HTTP client on the command line is given that its request carries: a header
# (curl's and wget's `-H`/`--header`, httpie's `Name:value` items), a user and password
# (curl's `-u`, `-U`; httpie's `-a`), cookies (curl's `-b`). Each is masked as the
# request's own would be, read only after the program that takes it: elsewhere `-u
# 1000:1000` is a user id and `auth-proxy:8080` a host.
CURL, WGET, HTTPIE = "curl", "wget", "httpie"
_PROGRAMS = {"curl": CURL, "curl.exe": CURL, "wget": WGET, "http": HTTPIE, "https": HTTPIE}
_PROGRAMS |= {"xh": HTTPIE, "xhs": HTTPIE}
# an option, alone (its value the next word) or with its value attached: -H…, -sH…, --header=…
_OPTIONS = {
    CURL: re.compile(
        r"(-[A-Za-z]*?[HuUb]|--header=?|--user=?|--proxy-user=?|--cookie=?)(.*)", re.S
    ),
    WGET: re.compile(r"(--header=?)(.*)", re.S),
    HTTPIE: re.compile(r"(-[A-Za-z]*a|--auth=?)(.*)", re.S),
}
_HEADER = re.compile(r"""\s*(['"]?)([A-Za-z0-9][\w-]*)(\s*:\s*)(.+)""", re.S)
_ITEM = re.compile(r"""(['"]?)([A-Za-z0-9][\w-]*)(:[ \t]*)(\S.*)""", re.S)  # httpie's
# the same inside one word holding a whole command (`sh -c '…'`), per program
_IN_TEXT = {
    CURL: re.compile(
        r"""(?<!\S)(?P<opt>-[A-Za-z]*?[HuUb]|--header|--user|--proxy-user|--cookie)"""
        r"""(?:\s+|=)?(?P<q>['"])?(?P<value>(?(q)[^'"]+|[^\s'"]+))"""
    ),
    WGET: re.compile(
        r"""(?<!\S)(?P<opt>--header)(?:\s+|=)?(?P<q>['"])?(?P<value>(?(q)[^'"]+|\S+))"""
    ),
    HTTPIE: re.compile(
        r"""(?<!\S)(?P<opt>-[A-Za-z]*?a\s+|--auth[\s=]+)?(?P<q>['"])?(?P<value>(?(q)[^'"]+|\S+))"""
    ),
}
_SEGMENT = re.compile(r"[^;&|\n]+")  # a shell string's commands
_WORD_ONE = re.compile(r"\S+")


def _masked_value(program: str, option: str | None, value: str) -> str:
    """`value`, given to `option` of `program` (None: an httpie item), with what is secret
    in it masked: a header's value, a cookie's values, a user's password."""
    name = option.rstrip("=") if option is not None else ""
    short = name[-1:] if name[:2] != "--" else ""  # the last of -sH's letters
    if option is None or name == "--header" or (program != HTTPIE and short == "H"):
        m = (_ITEM if option is None else _HEADER).fullmatch(value)
        if m is None or not is_secret_header(m.group(2)):
            return value
        return value[: m.start(4)] + redact_header(m.group(2), m.group(4))
    if name == "--cookie" or (program == CURL and short == "b"):  # name=value (or a file)
        if "=" not in value:
            return value
        return re.sub(r"(=\s*)[^;]*", lambda c: c.group(1) + REDACTED, value)
    user, colon, password = value.partition(":")  # -u, -U, --user, --proxy-user, -a
    if not colon:  # curl asks for the password; httpie's is a token (-A bearer)
        return value if program == CURL else REDACTED
    return f"{user}:{REDACTED}" if password else f"{REDACTED}:"


def _option_of(program: str, word: str) -> tuple[str, str] | None:
    """(option, attached value) when `word` is one of the options above."""
    m = _OPTIONS[program].fullmatch(word) if program in _OPTIONS else None
    if m is None:
        return None
    option, attached = m.group(1), m.group(2)
    if option.startswith("--") and attached and not option.endswith("="):
        return None  # another long option: --user-agent, --auth-type, --cookie-jar
    return option, attached


def _in_text(text: str) -> str:
    """Headers, users and cookies inside one word holding a whole command (`sh -c '…'`),
    each command of it read after the program it runs."""

    def command(seg: re.Match[str]) -> str:
        part = seg.group()
        first = _WORD_ONE.search(part)
        program = _PROGRAMS.get(first.group().rsplit("/", 1)[-1]) if first else None
        if program is None:
            return part

        def one(m: re.Match[str]) -> str:
            option = m.group("opt")
            if program == HTTPIE and option is None and ":" not in m.group("value"):
                return m.group(0)
            cut = m.start("value") - m.start()
            opt = option.strip() if option is not None else None
            return m.group(0)[:cut] + _masked_value(program, opt, m.group("value"))

        return _IN_TEXT[program].sub(one, part)

    return _SEGMENT.sub(command, text)


def redact_argv(argv: Sequence[str]) -> list[str]:
    """The recorded command line with secrets masked: the value of an option named like
    a secret, an HTTP client's headers, users and cookies (above), key-shaped words (as
    in headers), and URL credentials."""
    out: list[str] = []
    value_next = False  # the word before was an option that takes a secret
    given: str | None = None  # the client option the word before was (its value next)
    program = ""  # the HTTP client this command line runs, once a word names one
    for arg in argv:
        if value_next and not arg.startswith("-"):
            out.append(REDACTED)
            value_next = False
            continue
        if given is not None:
            shown, given = _masked_value(program, given, arg), None
            if shown != arg:
                out.append(_KEY_SHAPED.sub(REDACTED, shown))
                continue
        program = _PROGRAMS.get(arg.rsplit("/", 1)[-1], program)
        client = _option_of(program, arg) if program else None
        if client is not None:
            flag, attached = client
            if attached:
                arg = flag + _masked_value(program, flag, attached)
            else:
                given = flag
        elif program == HTTPIE and not arg.startswith("-"):
            arg = _masked_value(program, None, arg)
        option = _SECRET_OPTION.fullmatch(arg)
        if option is not None and is_identifier_name(option.group(1)):  # --prompt-cache-key
            option = None
        value_next = option is not None and option.group(2) is None and given is None
        if option is not None and option.group(2) is not None and client is None:
            arg = option.group(1) + "=" + REDACTED
        arg = redact_url(arg) if "://" in arg else arg
        arg = _in_text(arg) if " " in arg else arg
        arg = _ARGV_SECRET.sub(_argv_secret, arg)
        out.append(_KEY_SHAPED.sub(REDACTED, arg))
    return out


def redact_json_paths(body: bytes, paths: Sequence[str]) -> bytes:
    """`body` with the values at dotted `paths` redacted (see `redact_json`)."""
    return redact_json(body, paths)[0]


def redact_json(body: bytes, paths: Sequence[str]) -> tuple[bytes, int]:
    """Replace the values at dotted `paths` ("messages.*.content") with "[REDACTED]";
    returns the body and how many values were replaced.

    `*` matches every key of an object or every item of an array; a number matches an
    array index. A value that holds nothing (null, "", [], {}) is kept: "[REDACTED]"
    would say the request sent content it did not. A body that is not JSON, or where no
    path matches, is returned unchanged.
    The stdlib json is used, not orjson, because it round-trips big integers and NaN:
    a body we fail to parse would otherwise be recorded unredacted.
    """
    if not paths or not body:
        return body, 0
    try:
        doc = json.loads(body)
    except ValueError:  # includes UnicodeDecodeError
        return body, 0
    except RecursionError:  # nested past Python's limit: no path can be found, mask it all
        return TOO_DEEP, 1
    hits = 0
    for path in paths:
        hits += _redact(doc, path.split("."))
    if not hits:
        return body, 0
    try:
        return json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode("utf-8"), hits
    except RecursionError:
        return TOO_DEEP, 1


# What a body that --redact-json cannot walk is recorded as: never the body in clear.
TOO_DEEP = b'"[REDACTED: a JSON body nested too deeply to mask by path]"'


def _redact(node: object, parts: list[str]) -> int:
    key, rest = parts[0], parts[1:]
    if isinstance(node, dict):
        keys: Iterable[Any] = list(node) if key == "*" else [key] if key in node else []
    elif isinstance(node, list):
        if key == "*":
            keys = range(len(node))
        else:
            keys = [int(key)] if key.isdigit() and int(key) < len(node) else []
    else:
        return 0
    hits = 0
    for k in keys:
        if rest:
            hits += _redact(node[k], rest)
        elif node[k] not in EMPTY and node[k] != REDACTED:  # (a path given twice: once)
            node[k] = REDACTED
            hits += 1
    return hits


# values that hold no content: kept as sent (`False`, `0` are content, and 0 == False)
EMPTY: tuple[object, ...] = (None, "", [], {})
