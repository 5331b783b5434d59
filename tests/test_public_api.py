"""The declared public API: what `streamscope` exports, seen by type checkers as by
Python, typed (py.typed) and documented. Changing it is a decision: update this test."""

from __future__ import annotations

import ast
import importlib
import inspect
import os
import subprocess
import sys

import streamscope

PUBLIC = {
    "PlaybackTransport",
    "RecordingError",
    "RecordingExists",
    "RecordingTransport",
    "__version__",
    "async_playback_transport",
    "async_recording_transport",
    "playback_transport",
    "recording_transport",
}
PACKAGE = os.path.dirname(streamscope.__file__)


def test_the_public_surface_is_exactly_this():
    assert set(streamscope.__all__) == PUBLIC
    assert len(streamscope.__all__) == len(PUBLIC)
    for name in PUBLIC:
        assert getattr(streamscope, name) is not None
        assert name in dir(streamscope)


def test_type_checkers_see_every_public_name():
    """A checker reads `if TYPE_CHECKING:` imports, not the lazy __getattr__: every
    public name but __version__ is imported there, from where it is defined."""
    with open(os.path.join(PACKAGE, "__init__.py")) as f:
        tree = ast.parse(f.read())
    seen = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            for imp in node.body:
                assert isinstance(imp, ast.ImportFrom)
                for alias in imp.names:
                    seen[alias.name] = imp.module
    assert set(seen) == PUBLIC - {"__version__"}
    for name, module in seen.items():  # the same object as at run time
        defined = importlib.import_module(f"streamscope.{module}")
        assert getattr(defined, name) is getattr(streamscope, name)


def test_the_package_is_marked_typed():
    assert os.path.isfile(os.path.join(PACKAGE, "py.typed"))


def test_every_public_callable_documents_arguments_return_and_errors():
    for name in ("playback_transport", "recording_transport"):
        doc = inspect.getdoc(getattr(streamscope, name)) or ""
        for section in ("Args:", "Returns:", "Raises:"):
            assert section in doc, (name, section)
        for parameter in inspect.signature(getattr(streamscope, name)).parameters:
            assert f"{parameter}:" in doc, (name, parameter)
    for name in ("async_playback_transport", "async_recording_transport"):
        doc = inspect.getdoc(getattr(streamscope, name)) or ""
        assert f"errors as `{name.removeprefix('async_')}`" in doc
    for name in ("PlaybackTransport", "RecordingTransport", "RecordingExists", "RecordingError"):
        assert len(inspect.getdoc(getattr(streamscope, name)) or "") > 40, name


def test_importing_streamscope_loads_none_of_it():
    code = (
        "import sys, streamscope\n"
        "print(','.join(m for m in sys.modules if m.startswith(('streamscope.', 'httpx', 'orjson'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
