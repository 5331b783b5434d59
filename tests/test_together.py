"""together.py, the batches exported modules run in: each module's outcome is its own."""

from __future__ import annotations

import pytest

from .together import Together

pytestmark = pytest.mark.slow  # one pytest subprocess


def _module(text: str):
    def write(module) -> None:
        module.write_text(text)

    return write


def _raises(module) -> None:
    raise RuntimeError("no module for this key")


def test_each_module_of_a_batch_reads_its_own_outcome_in_its_own_folder(tmp_path):
    ran = Together(tmp_path).run(
        "batch",
        {
            "green": _module("def test_ok():\n    pass\n"),
            "red": _module("def test_no():\n    assert 1 == 2, 'my own message'\n"),
            "unimportable": _module("import no_such_module_anywhere\n"),
            "writer-raises": _raises,
            "two": _module("def test_a():\n    pass\n\ndef test_b():\n    pass\n"),
            "writes-here": _module("open('HERE', 'w').close()\n\ndef test_ok():\n    pass\n"),
        },
    )
    assert ran["green"].green and (ran["green"].passed, ran["green"].failed) == (1, 0)
    red = ran["red"]
    assert not red.green and (red.passed, red.failed, red.errors) == (0, 1, 0)
    assert "my own message" in red.text and "no_such_module" not in red.text
    broken = ran["unimportable"]  # one module that cannot import fails alone
    assert (broken.passed, broken.errors) == (0, 1) and "no_such_module_anywhere" in broken.text
    assert (
        ran["writer-raises"].errors == 1 and "no module for this key" in ran["writer-raises"].text
    )
    assert ran["two"].green and ran["two"].passed == 2
    here = ran["writes-here"]  # imported with its own folder the working directory
    assert here.green and (here.module.parent / "HERE").exists()
    assert not (tmp_path / "batch" / "HERE").exists()
    # a second call in the session reads what the first wrote
    assert Together(tmp_path).run("batch", {}) == ran
