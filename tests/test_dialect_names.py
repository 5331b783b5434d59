"""A stream whose dialect was not told is read as Chat Completions and says so; a name no
registered dialect has is a mistake, said as one, never read as Chat."""

from __future__ import annotations

import pytest

from streamscope.dialects import DEFAULT, DIALECTS, UnknownDialect, dialect, open_engine, sdk_note


def test_a_registered_name_is_its_dialect():
    for name, record in DIALECTS.items():
        assert dialect(name) is record
        assert "dialect-unknown" not in {a.kind for a in open_engine(name).log.entries()}


def test_not_told_is_read_as_chat_and_says_so():
    assert dialect(None) is DEFAULT
    (entry,) = [a for a in open_engine(None).log.entries() if a.kind == "dialect-unknown"]
    assert "read as Chat Completions" in entry.message


@pytest.mark.parametrize("name", ["", "chat", "Chat-Completions", "anthropic"])
def test_a_name_no_dialect_has_is_an_error(name):
    with pytest.raises(UnknownDialect, match="no dialect is named") as raised:
        dialect(name)
    assert "chat-completions" in str(raised.value)  # it names the dialects there are
    with pytest.raises(UnknownDialect):
        open_engine(name)
    with pytest.raises(UnknownDialect):
        sdk_note([name])
