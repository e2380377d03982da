"""Numbers, money, sizes, ages and links as the interface shows them, in its language.

One place decides how a figure looks on the page, with the answer catalogs' formatters
(`assistant.answers.i18n`, Babel/CLDR), so a table cell, a chart label and the chat's answer write
the same figure the same way: '$1.80' in English, '1,80 $' in German, 'US$ 1,80' in Dutch. Money
is USD (the catalog's currency); memory is GiB (2^30 bytes), spelled GiB in every language, as the
answers do.
"""

from __future__ import annotations

import re
from datetime import date

from babel import Locale
from babel.units import format_unit

from assistant.answers.i18n import (
    format_count,
    format_date,
    format_money,
    format_number,
    format_percent,
    hour_digits,
)
from assistant.web.ui_strings import ui_text
from tools.units import GIB

__all__ = [
    "NBSP",
    "age_cell",
    "count",
    "day",
    "gib",
    "gib_of",
    "hours",
    "link",
    "money",
    "need_of_vram",
    "number",
    "percent",
    "source_link",
]

NBSP = "\u00a0"
DASH = "–"  # an empty figure
_URL = re.compile(r"https?://[^\s)\]>,;]+")
# A GitHub repository named in a source without a URL: "SkyPilot catalog (skypilot-org/...)".
_REPO = re.compile(r"(?:^|\()([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)(?=[\s)])")


def number(value: float, lang: str, digits: int = 1) -> str:
    """A decimal in the locale: 1234.5 -> '1,234.5' (en), '1.234,5' (de)."""
    return format_number(value, lang, digits)


def count(value: float, lang: str) -> str:
    """A whole number with the locale's grouping: 8030261248 -> '8 030 261 248' (fr)."""
    return format_count(value, lang)


def money(amount: float | None, lang: str, digits: int = 2) -> str:
    """USD with cents in the locale ('$1.80', '1,80 $'); a dash for no amount."""
    return DASH if amount is None else format_money(amount, "USD", lang, digits)


def gib(value_gib: float, lang: str, digits: int = 1) -> str:
    """GiB in the locale: 30.14 -> '30.1 GiB' (en), '30,1 GiB' (fr)."""
    return f"{number(value_gib, lang, digits)}{NBSP}GiB"


def gib_of(n_bytes: float, digits: int = 1) -> float:
    """Bytes as GiB rounded for display (the number a sortable column holds)."""
    return round(n_bytes / GIB, digits)


def need_of_vram(need_bytes: float, vram_bytes: float, lang: str) -> str:
    """'30.1 / 48 GiB': the need per GPU against the card's memory, as table and chart show it."""
    vram = gib_of(vram_bytes)
    vram_text = number(vram, lang, 0 if vram == round(vram) else 1)
    return f"{number(gib_of(need_bytes), lang)} / {vram_text}{NBSP}GiB"


def hours(value: float, lang: str) -> str:
    """Hours as a bare number with the answers' digits (2 under 1 h, 1 under 100 h, else 0)."""
    return number(value, lang, hour_digits(value))


def percent(fraction: float, lang: str, digits: int = 0) -> str:
    """0.209 -> '21%' (en), '%21' (tr)."""
    return format_percent(fraction, lang, digits)


def day(value: date, lang: str) -> str:
    """A date in the locale's medium style: 'May 28, 2026', '28.05.2026'."""
    return format_date(value, lang)


def age_cell(age_days: int | None, age_hours: float | None, fetched: bool, lang: str) -> str:
    """How old a price is, short: '187 days', '3 hr', 'now' (in the locale's units); a refreshed
    price younger than two days counts in hours, everything else in days."""
    if age_days is None:
        return DASH
    locale = Locale.parse(lang)
    if fetched and age_hours is not None and age_hours < 48:
        if age_hours < 1:
            return ui_text(lang, "age_now")
        return str(format_unit(round(age_hours), "duration-hour", length="short", locale=locale))
    return str(format_unit(age_days, "duration-day", length="short", locale=locale))


def link(url: str, text: str) -> str:
    """A Markdown link; brackets in the text are escaped."""
    label = text.replace("[", "\\[").replace("]", "\\]")
    return f"[{label}]({url})"


def source_link(source: str, lang: str) -> str:
    """A price source as a Markdown link to its first URL (labelled with the site, e.g.
    'aws.amazon.com'), or to the GitHub repository it names ('owner/repo' at its start or in
    brackets); the text itself when it names neither."""
    found = _URL.search(source)
    if found is None:
        repo = _REPO.search(source)
        if repo is None:
            return source
        return link(f"https://github.com/{repo.group(1)}", f"github.com/{repo.group(1)}")
    url = found.group(0).rstrip(".")
    host = re.sub(r"^https?://(www\.)?", "", url).split("/")[0]
    return link(url, host or ui_text(lang, "source_link"))
