"""Numbers as people type them: "1.5", "1,5", "200.000", "200,000", "200 000" (French), "2k",
"2e8" (scientific notation, an exponent of one or two digits).

A single separator followed by exactly three digits groups thousands ("200.000" and "200,000"
are 200000) after one to three leading digits that are not a lone 0 ("0.125" and "1234.567"
stay fractions); any other single separator is the decimal mark ("1,5" and "1.5" are 1.5).
With both marks, the last one is the decimal mark ("1.234,5").

A minus sign (ASCII "-" or "−") written right before the digits and not after a word or another
number is part of the number: "-100M tokens" reads as -100M, so the caller can reject it, never
as 100M. "7-13B" and "Llama-3" keep their dash as a range or name mark.

Only numbers that are usable are matched: at most `MAX_GROUP_DIGITS` digits between marks and
`MAX_GROUPS` groups after the first, so every matched value is finite (at most about 1e204 with
its exponent, and stays finite when scaled by a magnitude word); a longer digit run or exponent
("1e309") is not a number at all, nor is any part of it. `read_number` never raises: it returns
None for anything that is not a usable number (no digits, stray marks, overflow, NaN, infinity).
"""

from __future__ import annotations

import math
import re

__all__ = [
    "NUMBER",
    "NUMBER_FR",
    "ODD_NUMBER",
    "number_source",
    "parse_number",
    "read_number",
    "read_odd_number",
]

MAX_GROUP_DIGITS = 15
MAX_GROUPS = 6
_MINUS = "-−"
_GROUPS = f"\\d{{1,{MAX_GROUP_DIGITS}}}(?:[.,']\\d{{1,{MAX_GROUP_DIGITS}}}){{0,{MAX_GROUPS}}}"
_SPACE_GROUPS = f"(?: \\d{{3}}(?!\\d)){{0,{MAX_GROUPS}}}"
# Not glued to a word or another number ("llama3", "h100", the tail of "1'000'000"), and not
# cut short: the digits, marks, groups or exponent after the match may not continue it.
_START = "(?<![\\w.,])(?<!\\d')"
_END = "(?![.,']?\\d)(?!e[+-]?\\d)"
_EXPONENT = "(?:e[+-]?\\d{1,2}(?!\\w))?"
NUMBER = f"{_START}[{_MINUS}]?{_GROUPS}{_EXPONENT}{_END}"
# French also groups thousands with a space; a match never starts inside such a run.
NUMBER_FR = (
    f"{_START}(?<!\\d )[{_MINUS}]?{_GROUPS}{_SPACE_GROUPS}{_EXPONENT}{_END}(?! \\d{{3}}(?!\\d))"
)
# What people write for a number that `NUMBER` does not take: a power of ten ("10^12",
# "2x10^9", "10**400"), an exponent of three digits or more ("1e309"), a digit run longer than
# `MAX_GROUP_DIGITS`, and the non-numbers NaN and infinity. Read by `read_odd_number`, so that
# "1e309 tokens" is refused by name rather than dropped, and "10^400 tokens" is not 400 tokens.
ODD_NUMBER = (
    "(?i:nan|inf(?:inity)?|∞"
    "|(?:\\d{1,6}(?:[.,]\\d{1,6})?\\s*[x×*·]\\s*)?10\\s*(?:\\^|\\*\\*)\\s*[+-]?\\d{1,6}"
    "|\\d{1,6}(?:[.,]\\d{1,6})?e[+-]?\\d{3,6}"
    f"|\\d{{{MAX_GROUP_DIGITS + 1},60}})(?![\\w.,])"
)
_POWER = re.compile(r"(?:(\d+(?:[.,]\d+)?)[x×*·])?10(?:\^|\*\*)([+-]?\d+)")
_BIG_EXPONENT = re.compile(r"(\d+(?:[.,]\d+)?)e([+-]?\d+)")
_PARSED = re.compile(f"[{_MINUS}]?\\d[\\d.,' ]*(?:e[+-]?\\d{{1,2}})?", re.IGNORECASE)


def number_source(lang: str) -> str:
    """The regex source of a number in language `lang`."""
    return NUMBER_FR if lang == "fr" else NUMBER


def read_number(text: str) -> float | None:
    """The value of a number as `number_source` matches it ("1.234,5", "200 000", "-3"), or
    None when `text` is not one or its value is not a finite float."""
    text = text.strip()
    if not _PARSED.fullmatch(text):
        return None
    sign = -1.0 if text[0] in _MINUS else 1.0
    digits = text.lstrip(_MINUS).replace(" ", "").replace("'", "").lower()
    mantissa, _, exponent = digits.partition("e")
    try:
        value = _unsigned(mantissa) * 10.0 ** int(exponent or 0)
    except (ValueError, IndexError, OverflowError):
        return None
    return sign * value if math.isfinite(value) else None


def parse_number(text: str) -> float:
    """`read_number`, with NaN for what is not a usable number (every string the patterns match
    is usable, so callers reading matches always get a finite value). Never raises."""
    value = read_number(text)
    return math.nan if value is None else value


def _unsigned(digits: str) -> float:
    """The value of digits with '.' and ',' marks (see the module docstring for the rules)."""
    marks = [ch for ch in digits if ch in ".,"]
    if not marks:
        return float(digits)
    if len(set(marks)) == 2:
        decimal = marks[-1]
        whole, _, frac = digits.rpartition(decimal)
        return float(re.sub(r"[.,]", "", whole) + "." + frac)
    mark = marks[0]
    groups = digits.split(mark)
    lead_ok = len(groups[0]) <= 3 and groups[0][0] != "0"  # "0.125", "1234.567" group nothing
    if len(groups) > 2 or (len(groups[1]) == 3 and lead_ok):
        return float("".join(groups))
    return float(groups[0] + "." + groups[1])


def read_odd_number(text: str) -> float:
    """The value of an `ODD_NUMBER` match: NaN for 'nan', infinity for 'inf' and for a power
    beyond float range, else the power or the digits' value."""
    folded = re.sub(r"\s+", "", text).lower()
    if folded == "nan":
        return math.nan
    if folded in ("inf", "infinity", "∞"):
        return math.inf
    power = _POWER.fullmatch(folded) or _BIG_EXPONENT.fullmatch(folded)
    if power is None:
        return float(folded) if folded.isdigit() else math.nan
    coefficient = float((power[1] or "1").replace(",", "."))
    try:
        return coefficient * 10.0 ** int(power[2])
    except OverflowError:
        return math.inf
