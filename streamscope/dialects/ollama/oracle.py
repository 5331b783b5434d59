"""The real `ollama` client as the `ollama-python` strategy: oracle and fallback.

`run_real_ollama` serves the frames, one line each, to a real `ollama.Client` through an
httpx MockTransport (the client hands its keyword arguments to `httpx.Client`) and runs
`client.chat(..., stream=True)` the way its users do, collecting every chunk's
`message.tool_calls`. Its answer is the ground truth `sdk_model.OllamaPythonEmulation`
must reproduce; `ollama_result` runs it only where the emulation declines a shape.

`ollama` is imported lazily: streamscope must import without it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from ...core.calls import Call, StrategyError, Unmodeled
from ...core.frames import Frame
from ..typed import emulated_or_real
from .sdk_model import OllamaPythonEmulation, arguments_json

NOT_INSTALLED = (
    "the ollama package is not installed, and this stream has a shape streamscope's "
    "emulation of it does not cover: install ollama to see what its users collect"
)


def ollama_version() -> str | None:
    """The installed ollama package's version: what `ollama-python` stands for (no import)."""
    from ..versions import installed

    return installed("ollama")


class _Lines:
    """The body, one frame's line per chunk; knows which frame the client is reading."""

    def __init__(self, frames: list[Frame]) -> None:
        self.frames = frames
        self.current = 0

    def __iter__(self) -> Iterator[bytes]:
        for frame in self.frames:
            self.current = frame.number
            yield frame.data.encode("utf-8", "surrogatepass") + b"\n"


def run_real_ollama(frames: Iterable[Frame]) -> list[Call] | StrategyError:
    """Every `message.tool_calls` entry of every chunk the installed ollama client yields,
    in order; an exception is reported at the frame being read."""
    import httpx
    import ollama

    body = _Lines(list(frames))

    def respond(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200, headers={"content-type": "application/x-ndjson"}, content=iter(body)
        )

    client = ollama.Client(host="http://127.0.0.1:9", transport=httpx.MockTransport(respond))
    out: list[Call] = []
    try:
        for chunk in client.chat(model="streamscope", messages=[], stream=True):
            for tc in chunk.message.tool_calls or []:
                call = Call(
                    0,
                    len(out),
                    "",
                    "function",
                    tc.function.name,
                    arguments_json(tc.function.arguments),
                    fragments=1,  # whole, in one line
                )
                call.first_frame = call.last_frame = body.current
                out.append(call)
    except Exception as exc:
        return StrategyError.from_exception(exc, body.current)
    finally:
        client.close()  # type: ignore[no-untyped-call]
    return out


def ollama_result(frames: Iterable[Frame]) -> list[Call] | StrategyError | Unmodeled:
    """The `ollama-python` strategy's answer: the emulation, or the real client where it can't."""
    return emulated_or_real(
        list(frames), OllamaPythonEmulation, ollama_version, NOT_INSTALLED, run_real_ollama
    )
