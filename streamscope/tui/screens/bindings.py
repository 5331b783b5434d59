"""The screens' bindings, made from the replay's keys (tui/keys.py): a key is written once."""

from __future__ import annotations

from collections.abc import Iterable

from textual.binding import Binding, BindingType

from .. import keys


def binding(key: keys.Key) -> Binding:
    return Binding(
        ",".join(key.keys),
        key.action,
        key.label,
        show=key.footer,
        key_display=key.display,
        priority=key.priority,
        tooltip=key.what,
        id=key.id,
    )


def bindings(of: Iterable[keys.Key]) -> list[BindingType]:
    return [binding(k) for k in of]


STREAM = bindings(keys.STREAM)
EXCHANGES = bindings(keys.EXCHANGES)
REQUEST = bindings(keys.REQUEST)
SESSION = bindings(keys.SESSION)
WAITING = bindings((keys.QUIT,))  # the first screen, waiting for a followed recording
