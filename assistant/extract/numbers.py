"""Numbers as people type them: "1.5", "1,5", "200.000", "200,000", "200 000" (French), "2k",
"2e8".

A single separator followed by exactly three digits groups thousands ("200.000" and "200,000"
are 200000) after one to three leading digits that are not a lone 0 ("0.125" and "1234.567"
stay fractions); any other single separator is the decimal mark ("1,5" and "1.5" are 1.5).
With both marks, the last one is the decimal mark ("1.234,5").
"""

from __future__ import annotations

import re

# Digits with separators, not glued to a word or another number ("llama3", "h100" are no
# numbers). French also groups thousands with a space.
NUMBER = r"(?<![\w.,])\d+(?:[.,']\d+)*(?:e[+-]?\d{1,2}(?!\w))?"
NUMBER_FR = r"(?<![\w.,])\d+(?:[.,']\d+)*(?: \d{3}(?!\d))*(?:e[+-]?\d{1,2}(?!\w))?"


def number_source(lang: str) -> str:
    """The regex source of a number in language `lang`."""
    return NUMBER_FR if lang == "fr" else NUMBER


def parse_number(text: str) -> float:
    """The value of a number matched by `number_source`."""
    digits = text.replace(" ", "").replace("'", "")
    if "e" in digits:  # scientific notation: "2e8", "1.5e9"
        mantissa, _, exponent = digits.partition("e")
        return parse_number(mantissa) * 10 ** int(exponent)
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
