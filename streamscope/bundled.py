"""Where the bundled sample recordings are: in the package (a wheel installs them as
`streamscope/samples`) or beside it (a checkout's `recordings/`)."""

from __future__ import annotations

import os


def samples_folder() -> str | None:
    """The bundled samples' folder (None: this installation lacks them)."""
    here = os.path.dirname(os.path.abspath(__file__))
    for folder in (
        os.path.join(here, "samples"),
        os.path.join(os.path.dirname(here), "recordings"),
    ):
        if os.path.isdir(folder):
            return folder
    return None
