"""Dates: the month-name patterns are skipped, and run in windows, only where that finds the
same dates as trying every pattern over the whole text."""

from __future__ import annotations

from datetime import date

from hypothesis import given, settings
from hypothesis import strategies as st

from assistant.answers.i18n import LANGUAGES, format_date
from assistant.grounding.dates import _month_numbers, find_dates

pieces = st.sampled_from(
    [*sorted(_month_numbers())[:40], "de", "of", "as", "Nov.", "EKİM", "2026", "1999", "12",
     "3", "30", "2026-11-30", "30.11.2026", "11/30/2026", "$7.16/h", "41.8 GiB", "de 2026",
     "5.", "31,", "20261", "septiembre"]
)  # fmt: skip
separators = st.sampled_from([" ", "\u00a0", ", ", ". ", "-", "", "\n", "/", "  ", "."])


@settings(max_examples=600)
@given(st.lists(st.tuples(pieces, separators), max_size=12))
def test_skipping_the_month_patterns_finds_the_same_dates(parts: list[tuple[str, str]]) -> None:
    text = "".join(piece + sep for piece, sep in parts)
    assert find_dates(text, text) == find_dates(text, text, gated=False), repr(text)


@given(st.dates(date(1990, 1, 1), date(2100, 12, 31)), st.sampled_from(LANGUAGES))
def test_a_localised_date_in_an_answer_is_still_read(day: date, lang: str) -> None:
    text = f"Prices as of {format_date(day, lang)}, 41.8 GiB at $7.16/h."
    dates, _ = find_dates(text, text)
    assert [d.options[0][:2] for d in dates] == [(day.year, day.month)], text
