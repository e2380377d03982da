"""Dates written in an answer or a source, in the six languages: ISO (2026-11-30), day.month.year
or month/day/year (both readings kept), and month names and abbreviations from Babel
("30 novembre 2026", "Nov 30, 2026", "15 EKİM 2026", "Ekim 2026"). `find_dates` is the part of
`assistant.grounding.figures.shown_figures` that reads them; it never raises on any text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from babel.dates import get_month_names

from tools.languages import LANGUAGES

__all__ = ["ShownDate", "find_dates"]


@dataclass(frozen=True, slots=True)
class ShownDate:
    """A written date; `options` are (year, month, day or None) readings."""

    text: str
    start: int
    options: tuple[tuple[int, int, int | None], ...]


def _month_key(name: str) -> str:
    """A month name as looked up: case-folded, without the dot of a Turkish capital İ (which
    lower-cases to i plus a combining dot) and without a trailing abbreviation dot."""
    return name.casefold().replace("\u0307", "").rstrip(".")


@cache
def _month_numbers() -> dict[str, int]:
    """Month names and abbreviations of the six languages, by `_month_key` -> 1..12."""
    names: dict[str, int] = {}
    for lang in LANGUAGES:
        for width in ("wide", "abbreviated"):
            for context in ("format", "stand-alone"):
                months = get_month_names(width, context=context, locale=lang)
                for number, name in months.items():
                    names[_month_key(name)] = int(number)
    return names


@cache
def _date_patterns() -> tuple[re.Pattern[str], ...]:
    month = "|".join(sorted(map(re.escape, _month_numbers()), key=len, reverse=True))
    return (
        re.compile(r"(?<!\d)(?P<y>\d{4})-(?P<m>\d{2})-(?P<d>\d{2})(?!\d)"),
        re.compile(r"(?<![\d.,])(?P<a>\d{1,2})[./-](?P<b>\d{1,2})[./-](?P<y>\d{4})(?!\d)"),
        re.compile(rf"(?<!\d)(?P<d>\d{{1,2}})\.?[ \u00a0](?:de[ \u00a0])?(?P<mn>{month})\.?,?"
                   rf"[ \u00a0](?:de[ \u00a0])?(?P<y>\d{{4}})(?!\d)", re.I),
        re.compile(rf"(?<![^\W\d_])(?=[^\W\d_]{{3,10}}\.?[ \u00a0]\d)(?P<mn>{month})\.?"
                   rf"[ \u00a0](?P<d>\d{{1,2}}),?[ \u00a0](?P<y>\d{{4}})(?!\d)", re.I),
        re.compile(rf"(?<![^\W\d_])(?=[^\W\d_]{{3,10}}\.?[ \u00a0]\d)(?P<mn>{month})\.?[ \u00a0]"
                   rf"(?P<y>\d{{4}})(?!\d)", re.I),
    )  # fmt: skip


# What every date written with a month name holds: a word (the month: each name and
# abbreviation ends in a letter), then a year after a space, maybe with a day between or a
# Spanish "de" before it. A text without it skips the three month-name patterns, which try
# ~100 names at every word (about 170 us on a 1.2 kB answer, against 6 us for this).
_MONTH_YEAR = re.compile(
    r"[^\W\d_]\.?,?[ \u00a0](?:de[ \u00a0])?(?:\d{1,2},?[ \u00a0])?\d{4}(?!\d)", re.I
)
_NUMERIC_PATTERNS = 2  # ISO and day.month.year come first; the rest name the month


def find_dates(masked: str, text: str, *, gated: bool = True) -> tuple[list[ShownDate], str]:
    """The dates in `masked` (a copy of `text` with URLs and names blanked out), shown as
    written in `text`, and `masked` with the dates blanked too (so no number reads them).
    `gated=False` tries every pattern (the check that the month-year gate changes nothing)."""
    dates: list[ShownDate] = []
    for i, pattern in enumerate(_date_patterns()):
        if gated and i >= _NUMERIC_PATTERNS and not _MONTH_YEAR.search(masked):
            break  # blanking a date never makes a month and a year appear
        matches = list(pattern.finditer(masked))
        for match in matches:
            options = _date_options(match)
            if options:
                dates.append(ShownDate(text[match.start() : match.end()], match.start(), options))
        if matches:
            masked = pattern.sub(lambda m: " " * len(m.group()), masked)
    dates.sort(key=lambda d: d.start)
    return dates, masked


def _date_options(match: re.Match[str]) -> tuple[tuple[int, int, int | None], ...]:
    groups = match.groupdict()
    year = int(groups["y"])
    pairs: list[tuple[int, int | None]]
    if groups.get("a"):
        a, b = int(groups["a"]), int(groups["b"])
        pairs = [(b, a), (a, b)]  # day.month.year first, month/day/year second
    else:
        month = _month_numbers().get(_month_key(groups["mn"])) if groups.get("mn") else None
        month = month if month is not None else int(groups.get("m") or 0)  # 0: no month read
        pairs = [(month, int(groups["d"]) if groups.get("d") else None)]
    return tuple((year, m, d) for m, d in pairs if 1 <= m <= 12 and (d is None or 1 <= d <= 31))
