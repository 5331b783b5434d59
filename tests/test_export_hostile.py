"""Generated code quotes what it embeds: an exported pytest module whose input is named or
filled with hostile text runs the test and nothing else."""

from __future__ import annotations

import os
import shutil
import sys

import pytest

from streamscope.export.fixtures import export, in_docstring

pytestmark = pytest.mark.slow  # the fast run (-m 'not slow') leaves it out

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "recordings")
SSE = os.path.join(ROOT, "gemini-no-index.sse")  # Chat Completions: openai runs it

# Names a file can have that a module must not take as code.
HOSTILE_NAMES = {
    "injection": 'x"""+__import__("os").system("touch PWNED")+""".sse',
    "single-quotes": "x'''+__import__('os').system('touch PWNED')+'''.sse",
    "windows-path": "C:\\Users\\name\\x.sse",  # \U starts a unicode escape in a str
    "escapes": "x\\N{BULLET}\\x41\\u00e9\\.sse",
    "braces": "{source}{where}{{}}.sse",
    "control": "x\x1b]0;pwned\x07\ny.sse",
    "not-utf8": os.fsdecode(b"x\xff\xfe.sse"),  # a lone surrogate once decoded
}


def _writer(name: str):
    def write(module) -> None:
        source = module.parent / name
        shutil.copy(SSE, source)
        module.write_bytes(export(str(source), "pytest").data)

    return write


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX file names")
@pytest.mark.parametrize("key", list(HOSTILE_NAMES))
def test_a_hostile_file_name_exports_to_a_module_that_runs_only_the_test(together, key):
    # every name's module, run by one pytest, each in its own folder
    ran = together.run("hostile-names", {k: _writer(n) for k, n in HOSTILE_NAMES.items()})
    mine = ran[key]
    assert mine.green, mine.text
    assert not (mine.module.parent / "PWNED").exists()
    assert not any((r.module.parent.parent / "PWNED").exists() for r in ran.values())
    source = mine.module.parent / HOSTILE_NAMES[key]
    text = mine.module.read_text(encoding="utf-8")
    # its docstring names the file, as Python's own escaping writes it
    assert in_docstring(str(source)) in text.splitlines()[0]
    ns: dict = {}
    exec(compile(text, str(mine.module), "exec"), ns)  # the docstring reads back as the name
    assert str(source) in ns["__doc__"]


@pytest.mark.parametrize("text", [*HOSTILE_NAMES.values(), '"', "\\", '\\"""', "\udc80\x00"])
def test_in_docstring_reads_back_as_the_text_inside_a_docstring(text):
    source = f'"""{in_docstring(text)}"""'
    assert eval(source) == text  # noqa: S307 (the test of the quoting itself)
