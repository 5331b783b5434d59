"""A real headless Chromium for the report's tests: a page's DOM after its scripts ran,
and every console line it wrote (an uncaught error, a refusal by the page's
Content-Security-Policy). Debian's `chromium` package; None where it is not installed
(scripts/check installs it when run as root)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
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
