"""The two HTTP client packages streamscope's transports serve: httpx2 and httpx.

openai 3.57 builds its clients with `httpx2` (a fork of `httpx` with its own classes) and
still accepts a legacy `httpx` client. A transport must answer each client with that
client's own Response and stream types (httpx2 asserts its stream type), so the
transports here take the package from the request they are given, or from `http=`.
Neither package is imported until a transport needs it.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import TypeVar

_T = TypeVar("_T", bound="Transport")

PACKAGES = ("httpx2", "httpx")


def load(name: str) -> ModuleType:
    """The package `name` ("httpx2" or "httpx"); ValueError for another name."""
    if name not in PACKAGES:
        raise ValueError(f"http must be one of {', '.join(PACKAGES)}, not {name!r}")
    return importlib.import_module(name)


def package_of(request: object, wanted: str | None = None) -> ModuleType:
    """The package whose Request `request` is; TypeError when it is neither (or not `wanted`)."""
    name = type(request).__module__.partition(".")[0]
    if name not in PACKAGES or name not in sys.modules:
        raise TypeError(
            f"streamscope: expected an httpx2 or httpx request, got {type(request).__qualname__}"
        )
    if wanted is not None and name != wanted:
        raise TypeError(
            f"streamscope: this transport was made for {wanted} (http={wanted!r}), "
            f"but a client of {name} used it"
        )
    return sys.modules[name]


class Transport:
    """What a transport of either package is used as: `with`, `async with`, close."""

    def close(self) -> None:
        """Release what the transport holds."""

    async def aclose(self) -> None:
        self.close()

    def __enter__(self: _T) -> _T:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self: _T) -> _T:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def sdk_package(sdk: ModuleType) -> str:
    """The HTTP package an SDK module (openai, anthropic) builds its clients with ("httpx2"
    or "httpx"), told from its `DefaultHttpxClient`'s base class without importing either."""
    client = getattr(sdk, "DefaultHttpxClient", None)
    for base in getattr(client, "__mro__", ())[1:]:
        name = base.__module__.partition(".")[0]
        if name in PACKAGES:
            return name
    return "httpx"  # a release older than DefaultHttpxClient used httpx


def openai_package() -> str:
    """The HTTP package the installed openai builds its clients with ("httpx2" or "httpx")."""
    import openai

    return sdk_package(openai)
