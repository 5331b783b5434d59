"""Which headers a hop keeps to itself (RFC 9110 7.6.1): the proxy forwards none, playback
sends none of those it recorded."""

from __future__ import annotations

# Hop-by-hop headers (RFC 9110 7.6.1): each hop's own business, never passed on.
HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-connection",
        "transfer-encoding",
        "te",
        "trailer",
        "upgrade",
        "proxy-authenticate",
        "proxy-authorization",
    }
)


def forwardable(headers: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The headers a proxy passes on to the next hop (RFC 9110 7.6.1, RFC 9112 6.3): no
    hop-by-hop header, none that the Connection header names, and no Content-Length
    beside a Transfer-Encoding (the coding framed the message, the length is wrong for
    the next hop: it is dropped, not forwarded)."""
    drop = set(HOP_BY_HOP)
    for k, v in headers:
        name = k.lower()
        if name == "connection":
            drop.update(x.strip().lower() for x in v.split(","))
        elif name == "transfer-encoding":
            drop.add("content-length")
    return [(k, v) for k, v in headers if k.lower() not in drop]
