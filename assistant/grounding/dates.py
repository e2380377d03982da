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
# Spanish "de" before it. It is read backwards, from each year: what stands just before the year
# (`_BEFORE_YEAR`, within `_BEFORE_YEAR_CHARS`). The three month-name patterns try ~100 names at
# every word; they run only in windows ending at such a year (`_month_year_windows`).
_YEAR = re.compile(r"(?<!\d)\d{4}(?!\d)")
_BEFORE_YEAR = re.compile(r"[^\W\d_]\.?,?[ \u00a0](?:de[ \u00a0])?(?:\d{1,2},?[ \u00a0])?\Z", re.I)
_BEFORE_YEAR_CHARS = 1 + 1 + 1 + 1 + 3 + 2 + 1 + 1  # letter . , space "de " day , space
_NUMERIC_PATTERNS = 2  # ISO and day.month.year come first; the rest name the month


def find_dates(masked: str, text: str, *, gated: bool = True) -> tuple[list[ShownDate], str]:
    """The dates in `masked` (a copy of `text` with URLs and names blanked out), shown as
    written in `text`, and `masked` with the dates blanked too (so no number reads them).
    `gated=False` tries every pattern over the whole text (the check that the month-year gate
    and its windows change nothing)."""
    dates: list[ShownDate] = []
    windows: list[tuple[int, int]] | None = None
    for i, pattern in enumerate(_date_patterns()):
        if gated and i >= _NUMERIC_PATTERNS:
            if windows is None:  # blanking a date never makes a month and a year appear
                windows = _month_year_windows(masked)
            if not windows:
                break
            matches = [m for lo, hi in windows for m in pattern.finditer(masked, lo, hi)]
        else:
            matches = list(pattern.finditer(masked))
        for match in matches:
            options = _date_options(match)
            if options:
                dates.append(ShownDate(text[match.start() : match.end()], match.start(), options))
        if matches:
            masked = pattern.sub(lambda m: " " * len(m.group()), masked)
    dates.sort(key=lambda d: d.start)
    return dates, masked


def _month_year_windows(masked: str) -> list[tuple[int, int]]:
    """Where a month-name date can be: every such date ends at a year (never followed by a
    digit) with `_BEFORE_YEAR` just before it, and is at most `_longest_date()` long, so it
    lies in [end - longest, end + 1), overlapping windows merged. The month patterns scanned
    there find what they find over the whole text: their lookbehinds see the text before a
    window, and the one character after it (not a digit) is inside it."""
    windows: list[tuple[int, int]] = []
    longest = _longest_date()
    for year in _YEAR.finditer(masked):
        end = year.end()
        if not _BEFORE_YEAR.search(masked, max(0, year.start() - _BEFORE_YEAR_CHARS), year.start()):
            continue
        lo, hi = max(0, end - longest), min(len(masked), end + 1)
        if windows and lo <= windows[-1][1]:
            windows[-1] = (windows[-1][0], hi)
        else:
            windows.append((lo, hi))
    return windows


@cache
def _longest_date() -> int:
    """The most characters a month-name date can take: "30. de septiembre., de 2026" (day,
    dot, space, "de ", the longest month name, dot, comma, space, "de ", year)."""
    return 2 + 1 + 1 + 3 + max(map(len, _month_numbers())) + 1 + 1 + 1 + 3 + 4


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
