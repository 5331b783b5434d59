"""A real headless Chromium for the report's tests: a page's DOM after its scripts ran,
and every console line it wrote (an uncaught error, a refusal by the page's
Content-Security-Policy). Debian's `chromium` package; None where it is not installed
(scripts/check installs it when run as root)."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

CHROMIUM = next(
    (p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None
)
# no network, no updates, no first-run work: the page alone (the container has no sandbox)
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--hide-scrollbars",
    "--enable-logging=stderr",
    "--v=0",
]
_CONSOLE = re.compile(r":CONSOLE[^\]]*\] (.*)")


def _run(page: Path, fragment: str, *extra: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    url = Path(page).resolve().as_uri() + (f"#{fragment}" if fragment else "")
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run(
            [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *extra, url],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
            env={**os.environ, "HOME": profile},
        )


def dump_dom(page: Path, fragment: str = "") -> tuple[str, list[str]]:
    """The page's DOM once loaded (opened at `#fragment`), and its console lines."""
    done = _run(page, fragment, "--dump-dom")
    return done.stdout, _CONSOLE.findall(done.stderr)


def screenshot(page: Path, out: Path, fragment: str = "", size: str = "1280,1100") -> None:
    _run(page, fragment, f"--screenshot={Path(out).resolve()}", f"--window-size={size}")


class Page:
    """A page open in headless Chromium, driven over the DevTools protocol (its
    WebSocket on 127.0.0.1, an ephemeral port): `evaluate` runs an expression in it as
    a person's input would (events dispatched, the page's own handlers answer)."""

    def __init__(self, page: Path, fragment: str = "") -> None:
        import json
        import time
        import urllib.request

        from websockets.sync.client import connect

        assert CHROMIUM is not None
        self._profile = tempfile.TemporaryDirectory()
        url = Path(page).resolve().as_uri() + (f"#{fragment}" if fragment else "")
        self._proc = subprocess.Popen(
            [
                CHROMIUM,
                *FLAGS,
                f"--user-data-dir={self._profile.name}",
                "--remote-debugging-address=127.0.0.1",
                "--remote-debugging-port=0",
                url,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "HOME": self._profile.name},
        )
        port_file = Path(self._profile.name) / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not (port_file.exists() and port_file.read_text().count("\n") >= 1):
            if time.monotonic() > deadline or self._proc.poll() is not None:
                self.close()
                raise RuntimeError("chromium did not open its DevTools port")
            time.sleep(0.05)
        port = int(port_file.read_text().splitlines()[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as r:
            target = next(t for t in json.load(r) if t["type"] == "page")
        self._stack = contextlib.ExitStack()
        self._ws = self._stack.enter_context(connect(target["webSocketDebuggerUrl"], max_size=None))
        self._id = 0
        self.console: list[str] = []  # console calls and uncaught exceptions
        self._send("Runtime.enable")
        ready = (  # (the target may still be loading, or about:blank before the page)
            "location.protocol === 'file:' && !!document.documentElement"
            " && document.documentElement.getAttribute('data-ready')"
        )
        while self.evaluate(ready) != "1":
            if time.monotonic() > deadline:
                raise RuntimeError("the page never said it was drawn")
            time.sleep(0.05)

    def _send(self, method: str, **params: object) -> dict:
        import json

        self._id += 1
        self._ws.send(json.dumps({"id": self._id, "method": method, "params": params}))
        while True:
            got = json.loads(self._ws.recv(timeout=30))
            if got.get("method") == "Runtime.consoleAPICalled":
                self.console.append(" ".join(str(a.get("value")) for a in got["params"]["args"]))
            elif got.get("method") == "Runtime.exceptionThrown":
                self.console.append(str(got["params"]["exceptionDetails"]))
            elif got.get("id") == self._id:
                return got.get("result", {})

    def evaluate(self, expression: str) -> object:
        got = self._send("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in got:
            raise AssertionError(got["exceptionDetails"])
        return got["result"].get("value")

    def close(self) -> None:
        if hasattr(self, "_stack"):
            self._stack.close()
        self._proc.terminate()
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        for _ in range(50):  # (its helper processes may write the profile a moment more)
            try:
                self._profile.cleanup()
                return
            except OSError:
                time.sleep(0.1)
        self._profile.cleanup()

    def __enter__(self) -> Page:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
