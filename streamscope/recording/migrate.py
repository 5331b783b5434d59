"""Upgrading old recordings, one line at a time, to the current schema.

Modelled on mitmproxy's io/compat.py: MIGRATIONS[v] turns a version-v line into a
version-(v+1) line; `migrate` applies them in a loop until SCHEMA_VERSION. To change the
format: bump SCHEMA_VERSION, add MIGRATIONS[old] and document both in recordings/README.md.

Version 0 (pre-release, never published; kept as the worked example and for tests):
  {"kind":"header","version":0,"tool":"streamscope","tool_version":"0.0.1","created":"..."}
  {"kind":"request","exchange":1,"t_us":5,"method":"POST","url":"...","headers":{"k":"v"},
   "body":"..."}
  {"kind":"response","exchange":1,"t_us":9,"status":200,"headers":{"k":"v"}}
  {"kind":"chunk","exchange":1,"t_us":12,"text":"data: ..."}
  {"kind":"end","exchange":1,"t_us":40,"reason":"complete"}
i.e. "kind" instead of "type", microseconds, headers as an object, chunk text in "text",
and no "argv" or "error".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from streamscope.recording.format import SCHEMA_VERSION, field_wrong
from streamscope.text import quote


def _v0_to_v1(d: dict[Any, Any]) -> dict[str, Any]:
    kind = d.get("kind")
    if kind == "header":
        return {
            "type": "header",
            "schema_version": 1,
            "tool": d.get("tool", "streamscope"),
            "tool_version": d.get("tool_version", "0"),
            # (absent: said missing from the header line, as a current header's is)
            **({"created": d["created"]} if "created" in d else {}),
            "argv": None,
        }
    # "type" and "exchange" first, as v1 writers do.
    out = {"type": kind, "exchange": d["exchange"], "t_ns": d["t_us"] * 1000}
    if kind == "request":
        out |= {"method": d["method"], "url": d["url"], "headers": _pairs(d["headers"])}
        out["body"] = d.get("body", "")
    elif kind == "response":
        out |= {"status": d["status"], "headers": _pairs(d["headers"])}
    elif kind == "chunk":
        out["data"] = d["text"]
    elif kind == "end":
        out |= {"reason": d["reason"], "error": None}
    return out


def _pairs(headers: dict[Any, Any]) -> list[list[str]]:
    return [[k, v] for k, v in headers.items()]


def _v1_to_v2(d: dict[Any, Any]) -> dict[Any, Any]:
    """Version 2 added `message` lines (WebSocket frames): a v1 line is a v2 line."""
    return {**d, "schema_version": 2} if d.get("type") == "header" else d


MIGRATIONS: dict[int, Callable[[dict[Any, Any]], dict[str, Any]]] = {0: _v0_to_v1, 1: _v1_to_v2}


def header_version(d: object) -> int | None:
    """The schema version a first line declares, or None when it is not a header;
    ValueError when it is a header that declares none an integer can be."""
    if type(d) is not dict:
        return None
    if d.get("type") == "header":
        if "schema_version" not in d:
            raise ValueError("the header line has no schema_version")
        v = d["schema_version"]
        if type(v) is not int:  # ("2", 2.0, true: a header a writer mangled, said as such)
            raise ValueError(f"the header's schema_version {quote(v, 40)} is not an integer")
        if v == 0:
            raise ValueError(
                'schema_version 0 is unknown for a header with "type" (version 0\'s header '
                'has "kind" and "version")'
            )
        return v
    if d.get("kind") == "header" and "type" not in d:  # version 0's header
        if "version" not in d:
            raise ValueError("the header line has no version")
        v = d["version"]
        if type(v) is not int:  # (false and 0.0 equal 0: a wrong type, said as such)
            raise ValueError(f"the header's version {quote(v, 40)} is not an integer")
        if v != 0:
            raise ValueError(f'the header\'s version {v} is not 0, the one version with "kind"')
        return 0
    return None


def check_version(version: int) -> None:
    """ValueError when we cannot read `version`."""
    if version > SCHEMA_VERSION:
        raise ValueError(
            f"schema_version {version} is newer than this streamscope reads "
            f"(up to {SCHEMA_VERSION}); upgrade streamscope"
        )
    if version not in MIGRATIONS and version != SCHEMA_VERSION:
        raise ValueError(f"schema_version {version} is unknown")


def migrate(d: dict[Any, Any], version: int) -> dict[Any, Any]:
    """`d`, a version-`version` line, as a current line. ValueError when it cannot be."""
    check_version(version)
    while version < SCHEMA_VERSION:
        try:
            d = MIGRATIONS[version](d)
        except (KeyError, TypeError, AttributeError) as e:
            why = (  # (said in JSON's words, not Python's: KeyError, 'NoneType' object)
                field_wrong(d, e.args[0], "")
                if isinstance(e, KeyError) and type(d) is dict
                else "a field is not of the JSON type it must be"
            )
            raise ValueError(f"cannot migrate this schema_version {version} line: {why}") from None
        version += 1
    return d
