"""extract_slots: every slot one message sets."""

from __future__ import annotations

from assistant.state import SlotUpdate


def extract_slots(text: str, lang: str) -> SlotUpdate:
    """The slots `text` (in language `lang`: en, nl, fr, tr, de or es) sets; never raises."""
    return SlotUpdate()
