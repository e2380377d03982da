"""Whether a price or a GPU named in a message is something the user asks for.

A message can name a price or a GPU without wanting it: "an H100 costs $0.01/h" states a price
(maybe one planted in a pasted text); "is an H100 worth it?" asks about a GPU. So:

- a price becomes a cap or a budget only with a limiting cue or a budget word next to it
  ("under $3/h", "max €2 per uur", "saatte en fazla 40 $", "2 €/h maximum", "budget $500",
  "50 TL'nin altında"), or when it stands alone as an item of a list ("…, saatte 50 TL, …",
  "$3/h" as the whole answer);
- a GPU becomes a preference only with a count ("8x H100", "2 A100s"), a cue before it ("on",
  "with", "only", "op", "sur", "auf", "con", "sadece", ...), a cue or Turkish case ending after
  it ("A100 ile", "A100'lerde", "H100s only"), when it stands alone as an item of a list
  ("A100 80GB", "H100 or H200"), or joined by "or"/"and" to a GPU that is one ("on H200s or
  B200s").

An item stands alone when the rest of its clause (up to a comma, semicolon, colon, bracket,
sentence end or line break) holds only articles, possessives, conjunctions, punctuation and
spans other readers already took (a model name, a GPU).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from assistant.extract.patterns import Patterns

# Clause boundaries in folded text; "." only before a space or the end ("2.5" is a number).
_BOUNDARY = re.compile(r"[,;:!?¿¡()\[\]\n]|\.(?=\s|$)|\s-\s")
_REACH = 200  # characters looked at on either side for a clause boundary


def clause(text: str, start: int, end: int) -> tuple[int, int]:
    """The clause of folded `text` around [start, end)."""
    lo = max(0, start - _REACH)
    left = max((m.end() for m in _BOUNDARY.finditer(text, lo, start)), default=lo)
    right = _BOUNDARY.search(text, end, min(len(text), end + _REACH))
    return left, right.start() if right else min(len(text), end + _REACH)


def stands_alone(p: Patterns, text: str, start: int, end: int, lead: int | None = None) -> bool:
    """Whether [start, end) is the only thing its clause says; `lead` is where words that
    belong to the item begin before `start` (rate words: "saatte 50 TL")."""
    left, right = clause(text, start, end)
    before = text[left : start if lead is None else lead]
    return bool(p.filler_only.fullmatch(before) and p.filler_only.fullmatch(text[end:right]))


def money_is_limit(p: Patterns, text: str, start: int, end: int) -> bool:
    """Whether the amount (or range of amounts) beginning at `start`, whose rate words end at
    `end`, is a cap or a budget the user sets rather than a price a sentence states."""
    if p.money_cue_before.search(text, max(0, start - 60), start):
        return True
    if p.money_cue_after.match(text, end):
        return True
    rate = p.rate_word_before.search(text, max(0, start - 30), start)
    return stands_alone(p, text, start, end, lead=rate.start() if rate else None)


def gpu_is_wanted(p: Patterns, text: str, start: int, end: int) -> bool:
    """Whether the GPU named at [start, end) is a preference (its count checked by the caller)."""
    if p.gpu_cue_before.search(text, max(0, start - 40), start):
        return True
    return bool(p.gpu_cue_after.match(text, end)) or stands_alone(p, text, start, end)
