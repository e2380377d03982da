"""Finding the figures a text shows, in any of the six answer languages' number styles.

`shown_figures(text)` returns every number and date written in `text`, each with the values it
can mean and the tolerance its written precision implies:

- separators: "1,234.5" and "1.234,5" and "1 234,5" (space, no-break or narrow no-break space,
  apostrophe) are 1234.5; every decimal is read ("3.1416" is 3.1416, never "3.141" and a 6).
  A group of exactly three digits after one separator is a thousands group only where a locale
  would write one: after one to three leading digits that are not a lone 0 ("0.017" and
  "1234.567" are fractions), with the same mark between all groups. A lone "1,234" or "1.234"
  is then either 1234 or 1.234: both readings are kept (the check accepts the figure when either
  traces to a source), unless `lang` names the answer's language, whose marks decide ("1,234"
  is 1234 in English and 1.234 in German);
- precision: a figure written with d decimals stands for anything within half a unit of its last
  digit: "41.8" for 41.75..41.85, "42" for 41.5..42.5;
- money and percent signs in either position ("$3", "3 €", "12 %", "%12"); a percentage also
  reads as its fraction (12 % = 0.12); an amount of money below one unit ("$0.01/h") is so
  coarse a figure that it traces only to a money value of the sources (a price or cost field,
  or an amount written as money), never to any other number;
- magnitude suffixes and words ("70B", "70 B", "200M", "8 Milliarden", "70 miljard", "7 milyar",
  "1.5T") read as the scaled value and as the bare number;
- dates (ISO, day.month.year, day/month/year either way round, and month names in the six
  languages, from Babel) are dates, not numbers.

Not figures: digits inside identifiers that start with a letter ("H100", "p4d.24xlarge",
"ZeRO-3", "bf16", "Llama-3.1-70B") or mix digits, letters and digits again ("3f9a12bc"), URLs,
list markers at the start of a line ("1.", "2)"), and small ordinals ("1st", "2e", "3º").
Everything else is a figure to be traced.

A bare integer from 0 to 10 (no decimals, money sign, percent or suffix) is marked `exact`: it is
nearly always a count or a position ("8x H100", "2 nodes", "top 3"), so it is grounded only by an
equal whole number in the sources, never by rounding a measured quantity (2.7 hours is not "3").

Reading never raises, whatever the text. A figure whose value or precision is not a finite float
("1e309", "1e-400" written with its precision, a 400-digit run) is still a figure but not a
usable number (`ShownNumber.usable` is False): its one candidate, `UNUSABLE`, matches no source
value, so such a figure in an answer is never grounded, and in a source it grounds nothing.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import cache, lru_cache

from babel.numbers import get_decimal_symbol, get_group_symbol

from assistant.grounding.dates import ShownDate, find_dates
from tools.languages import LOCALES

__all__ = [
    "ANY_KIND",
    "MONEY",
    "PERCENT",
    "RAW",
    "SIZE",
    "SOURCE_KINDS",
    "TIME",
    "UNUSABLE",
    "Candidate",
    "ShownDate",
    "ShownNumber",
    "shown_figures",
]

SMALL_INT = 10
_SPACES = " \u00a0\u202f"
_GROUP_CHARS = ",.'’" + _SPACES
# Grouped thousands (one mark throughout, each group exactly three digits, a decimal part with
# the other mark), else digits with one decimal mark, each not followed by a further mark and
# digit; else any run of digits and marks ("1,234,5"), read whole rather than cut.
_NUMBER = re.compile(
    r"(?<![\d.,])"
    r"(?P<num>\d{1,3}(?P<g>[,.'’\u00a0\u202f ])\d{3}(?!\d)(?:(?P=g)\d{3}(?!\d))*"
    r"(?:(?!(?P=g))[.,]\d+)?(?![.,]?\d)|\d+(?:[.,]\d+)?(?![.,]?\d)|\d+(?:[.,]\d+)+)"
    r"(?P<exp>[eE][-+]?\d{1,3}(?![^\W\d_]))?"
)
_IDENTIFIER = re.compile(r"(?<![\w.\-])[^\W\d_][\w.\-]*\d[\w.\-]*")
# Digits, then letters, then digits again ("3f9a12bc", an error id or hash): a name, not a figure.
_DIGIT_IDENTIFIER = re.compile(r"(?<![\w.\-])(?!\d+[eE]\d+(?!\w))\d+[^\W\d_]+\d\w*")
_ANY_DIGIT = re.compile(r"\d")
_YEAR = re.compile(r"(?<!\d)\d{4}(?!\d)")
_CURRENCY_PREFIX = re.compile(r"^(?:USD|EUR|TRY|TL|GBP)(?=\d)")
_URL = re.compile(r"(?:https?://|www\.)\S+|\]\([^)]*\)")
_LIST_MARKER = re.compile(r"^[ \t]*(?:[-*+][ \t]+)?(?:\*\*)?(\d{1,3})[.)](?:\*\*)?(?=[ \t])", re.M)
_ORDINAL = re.compile(r"(?:st|nd|rd|th|er|re|e|ème|eme|de|ste|º|ª|\.º|\.ª)(?![^\W\d_])")
_PERCENT_AFTER = re.compile(
    r"[ \u00a0\u202f]?(?:%|(?:percent|per cent|procent|pour ?cent|prozent|por ciento)"
    r"(?![^\W\d_]))",
    re.I,
)
_PERCENT_BEFORE = re.compile(r"(?:%|yüzde[ \u00a0])$", re.I)
# Magnitude words and suffixes, with every value they can mean (en "billion" = 1e9, fr/es
# "billion"/"billón" and de "Billion" = 1e12). Single letters are case-sensitive.
_MAGNITUDE_WORDS: dict[str, tuple[float, ...]] = {
    "thousand": (1e3,), "duizend": (1e3,), "mille": (1e3,), "tausend": (1e3,), "bin": (1e3,),
    "mil millones": (1e9,), "mil": (1e3,),
    "million": (1e6,), "millions": (1e6,), "millionen": (1e6,), "mio": (1e6,), "miljoen": (1e6,),
    "mln": (1e6,), "milyon": (1e6,), "millón": (1e6,), "millones": (1e6,), "mn": (1e6,),
    "billion": (1e9, 1e12), "billions": (1e9, 1e12), "bn": (1e9,), "mrd": (1e9,),
    "milliarde": (1e9,), "milliarden": (1e9,), "miljard": (1e9,), "mld": (1e9,),
    "milliard": (1e9,), "milliards": (1e9,), "md": (1e9,), "milyar": (1e9,),
    "trillion": (1e12, 1e18), "trillions": (1e12, 1e18), "biljoen": (1e12,), "billionen": (1e12,),
    "bio": (1e12,), "trilyon": (1e12,), "billón": (1e12,), "billones": (1e12,), "tn": (1e12,),
}  # fmt: skip
_MAGNITUDE_LETTERS: dict[str, float] = {"k": 1e3, "K": 1e3, "M": 1e6, "B": 1e9, "G": 1e9, "T": 1e12}
_MAGNITUDE = re.compile(
    r"[ \u00a0\u202f]?(?:(?P<word>"
    + "|".join(sorted(map(re.escape, _MAGNITUDE_WORDS), key=len, reverse=True))
    + r")\.?(?![^\W\d_])|(?P<letter>[kKMBGT])(?![^\W\d_]))",
    re.I,
)
_SIZE_AFTER = re.compile(r"[ \u00a0\u202f]?(?:[KMGTP]i?B|[kMGT]B|[KMGT]io|[kMGT]o)(?![^\W\d_])")
_TIME_AFTER = re.compile(
    r"[ \u00a0\u202f]?(?:h|hr|hrs|hours?|uur|heures?|saat|sa\.|std\.?|stunden?|horas?|min|"
    r"minutes?|minuten|minuti|dakika|dk|minutos?|days?|dagen|jours?|gün|tage?n?|días?)(?![^\W\d_])",
    re.I,
)
_MONEY_BEFORE = re.compile(r"[$€₺£][ \u00a0\u202f]?$")
_MONEY_AFTER = re.compile(r"[ \u00a0\u202f]?(?:[$€₺£]|US\$|\$US|TL|TRY|USD|EUR)(?![^\W\d_])")


# What a source value is, as the answer may display it: as computed, a byte count in a size
# unit, a fraction as a percentage, hours in minutes or days.
RAW, SIZE, PERCENT, TIME = "raw", "size", "percent", "time"
ANY_KIND = frozenset({RAW, SIZE, PERCENT, TIME})
# A value the sources give as money: a price or cost field, or an amount written with a currency.
# Only an amount below one unit needs one (see the module docstring); every money value is RAW too.
MONEY = "money"
SOURCE_KINDS = ANY_KIND | {MONEY}
TINY_MONEY = 1.0


@dataclass(frozen=True, slots=True)
class Candidate:
    """One value a written figure can mean: |value| within `tol` (equal when `exact`) of a
    source value of one of `kinds` (a figure marked as money matches only values as computed)."""

    value: float
    tol: float
    exact: bool = False
    kinds: frozenset[str] = ANY_KIND


# The one candidate of a figure that is not a usable number: no source value of no kind matches.
UNUSABLE = Candidate(value=math.inf, tol=0.0, exact=True, kinds=frozenset())


@dataclass(frozen=True, slots=True)
class ShownNumber:
    """A written number; grounded when every candidate of one of its readings is. `money`: written
    with a currency sign or code."""

    text: str
    start: int
    readings: tuple[tuple[Candidate, ...], ...]
    money: bool = False

    @property
    def usable(self) -> bool:
        """False for a figure whose value overflows (its only reading is `UNUSABLE`)."""
        return self.readings != ((UNUSABLE,),)


def shown_figures(text: str, lang: str | None = None) -> tuple[list[ShownNumber], list[ShownDate]]:
    """Every number and date `text` shows, in order (see the module docstring for the rules);
    `lang` (en, nl, fr, tr, de, es), when known, settles a lone "1,234" or "1.234"."""
    numbers, dates = _shown_figures(text, lang)
    return list(numbers), list(dates)


@lru_cache(maxsize=4096)
def _shown_figures(
    text: str, lang: str | None
) -> tuple[tuple[ShownNumber, ...], tuple[ShownDate, ...]]:
    if not _ANY_DIGIT.search(text):
        return (), ()
    masked = _mask(text, _URL)
    masked = _mask_identifiers(masked)
    dates, masked = find_dates(masked, text) if _YEAR.search(masked) else ([], masked)
    skip = {m.start(1) for m in _LIST_MARKER.finditer(masked)}
    numbers = []
    for match in _NUMBER.finditer(masked):
        if match.start() in skip:
            continue
        found = _read_number(match, masked, text, _marks(lang))
        if found is not None:
            numbers.append(found)
    return tuple(numbers), tuple(dates)


def _mask(text: str, pattern: re.Pattern[str]) -> str:
    return pattern.sub(lambda m: " " * len(m.group()), text)


def _mask_identifiers(text: str) -> str:
    def blank(match: re.Match[str]) -> str:
        word = match.group().rstrip(".-")
        if _CURRENCY_PREFIX.match(word):
            return match.group()
        return " " * len(word) + match.group()[len(word) :]

    return _mask(_IDENTIFIER.sub(blank, text), _DIGIT_IDENTIFIER)


# ------------------------------------------------------------------------------ numbers


def _read_number(
    match: re.Match[str], masked: str, text: str, marks: tuple[str, str] | None
) -> ShownNumber | None:
    raw, end = match.group("num"), match.end()
    after, before = masked[end : end + 16], masked[max(0, match.start() - 8) : match.start()]
    exp = match.group("exp")
    small = len(raw) <= 3 and raw.isdigit() and int(raw) <= SMALL_INT  # no int() of 5,000 digits
    if _ORDINAL.match(after) and not exp and small:
        return None
    readings = _readings(raw, marks)
    if exp:
        power = int(exp[1:])
        readings = [[(_scaled(v, power), d - power) for v, d in r] for r in readings]
    shown_end = end
    percent = _PERCENT_AFTER.match(after)
    magnitude = _MAGNITUDE.match(after) if not percent else None
    if magnitude and magnitude.group("letter") and magnitude.group("letter").lower() != "k":
        magnitude = magnitude if magnitude.group("letter").isupper() else None
    is_percent = bool(percent or _PERCENT_BEFORE.search(before))
    shown_end += percent.end() if percent else (magnitude.end() if magnitude else 0)
    kinds = _kinds(before, after)
    candidates = _candidates(readings, is_percent, _multipliers(magnitude), kinds)
    if not all(math.isfinite(c.value) and math.isfinite(c.tol) for r in candidates for c in r):
        candidates = ((UNUSABLE,),)
    money = kinds == _MONEY_KINDS
    shown = text[match.start() : shown_end].strip()
    return ShownNumber(shown, match.start(), candidates, money)


_MONEY_KINDS = frozenset({RAW})


def _kinds(before: str, after: str) -> frozenset[str]:
    """Which source forms a figure may match, by the sign or unit written with it."""
    if _MONEY_BEFORE.search(before) or _MONEY_AFTER.match(after):
        return _MONEY_KINDS
    if _SIZE_AFTER.match(after):
        return frozenset({RAW, SIZE})
    if _TIME_AFTER.match(after):
        return frozenset({RAW, TIME})
    return ANY_KIND


def _multipliers(magnitude: re.Match[str] | None) -> tuple[float, ...]:
    if magnitude is None:
        return ()
    if magnitude.group("word"):
        return _MAGNITUDE_WORDS[magnitude.group("word").lower()]
    return (_MAGNITUDE_LETTERS[magnitude.group("letter")],)


def _candidates(
    readings: list[list[tuple[float, int]]],
    is_percent: bool,
    multipliers: tuple[float, ...],
    kinds: frozenset[str],
) -> tuple[tuple[Candidate, ...], ...]:
    """Every reading as candidates: as written, as a fraction (percent), scaled (suffix)."""
    out: list[tuple[Candidate, ...]] = []
    plain = not (is_percent or multipliers) and kinds == ANY_KIND
    written_kinds = kinds & frozenset({RAW, PERCENT}) if is_percent else kinds
    money = kinds == _MONEY_KINDS and not is_percent
    for reading in readings:
        exact = plain and len(reading) == 1
        out.append(tuple(_candidate(v, d, 1.0, exact, written_kinds, money) for v, d in reading))
        scales = [0.01] if is_percent else list(multipliers)
        for scale in scales:
            out.append(
                tuple(_candidate(v, d, scale, False, _MONEY_KINDS, money) for v, d in reading)
            )
    return tuple(out)


def _scaled(value: float, power: int) -> float:
    """`value` x 10**`power`; infinite (never an OverflowError) when that is beyond a float."""
    try:
        return value * 10.0**power
    except OverflowError:
        return math.inf if value else 0.0


def _candidate(
    value: float,
    digits: int,
    scale: float,
    may_be_exact: bool,
    kinds: frozenset[str],
    money: bool = False,
) -> Candidate:
    exact = may_be_exact and digits == 0 and value <= SMALL_INT
    if money and abs(value * scale) < TINY_MONEY:
        kinds = frozenset({MONEY})  # "$0.01": only a money value of the sources grounds it
    return Candidate(value * scale, 0.5 * _scaled(1.0, -digits) * scale, exact, kinds)


def _readings(raw: str, marks: tuple[str, str] | None = None) -> list[list[tuple[float, int]]]:
    """The (value, decimals) readings of a digit string with separators. Most strings have one
    reading; a lone ',' or '.' before exactly 3 digits after a plausible leading group has two
    (one when `marks`, the locale's (decimal, group) marks, settle it); plain-space grouping may
    also be a run of separate numbers."""
    seps = [(i, ch) for i, ch in enumerate(raw) if not ch.isdigit()]
    if not seps:
        return [[(float(raw), 0)]]
    last_i, last_ch = seps[-1]
    tail = len(raw) - last_i - 1
    lead = raw[: seps[0][0]]
    grouped = len(lead) <= 3 and lead[0] != "0"  # "0.017" and "1234.567" group nothing
    readings: list[list[tuple[float, int]]] = []
    if tail != 3 or (len(seps) > 1 and last_ch in ".," and last_ch != seps[0][1]):
        readings.append([_decimal(raw, last_i)])
    elif len(seps) == 1 and last_ch in ".,":
        as_group, as_decimal = [(_digits(raw), 0)], [_decimal(raw, last_i)]
        if not grouped or (marks is not None and last_ch == marks[0]):
            readings.append(as_decimal)
        elif marks is not None and last_ch == marks[1]:
            readings.append(as_group)
        else:
            readings += [as_group, as_decimal]
    else:
        readings.append([(_digits(raw), 0)])
    if " " in raw:
        readings.append([r[0] for part in raw.split(" ") for r in _readings(part)[:1]])
    return readings


@cache
def _marks(lang: str | None) -> tuple[str, str] | None:
    """The (decimal, grouping) marks of an answer language as Babel formats numbers (French
    groups with a narrow no-break space, so a lone "." before three digits stays ambiguous)."""

    if lang not in LOCALES:
        return None
    locale = LOCALES[lang]
    return get_decimal_symbol(locale), get_group_symbol(locale)


def _digits(raw: str) -> float:
    return float("".join(ch for ch in raw if ch.isdigit()))


def _decimal(raw: str, point: int) -> tuple[float, int]:
    whole = "".join(ch for ch in raw[:point] if ch.isdigit()) or "0"
    frac = raw[point + 1 :]
    return float(f"{whole}.{frac}"), len(frac)
