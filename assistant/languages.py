"""Which of the six languages a turn is answered in and a page is shown in: the one set of rules.

- `choose_language(message, override, previous)`: the answer language of a turn: the language
  asked for; else the message's own language when the detector is sure of it (a short or
  ambiguous message keeps the conversation's language); else English.
- `language_from_header(accept_language)`: the page's language from the browser's
  Accept-Language header.
- `resolve_lang(code)`: 'de', 'DE', 'de-DE' or 'de_DE' -> 'de'; anything else names what is valid.

The languages themselves are defined once in `tools.languages`.
"""

from __future__ import annotations

import re

from knowledge.langid import detect_language
from tools.errors import InvalidInputError
from tools.languages import DEFAULT_LANGUAGE, LANGUAGES, Language

__all__ = ["choose_language", "language_from_header", "resolve_lang"]

# A message switches the conversation's language only with enough words and a sure detection.
MIN_WORDS_TO_SWITCH = 3
MIN_SCORE_TO_SWITCH = 0.5


def resolve_lang(lang: str) -> Language:
    """'de', 'DE', 'de-DE' or 'de_DE' -> 'de'; anything else is an InvalidInputError."""
    code = re.split(r"[-_]", lang.strip().lower(), maxsplit=1)[0]
    for known in LANGUAGES:
        if code == known:
            return known
    raise InvalidInputError("lang", lang, "one of " + ", ".join(LANGUAGES))


def choose_language(message: str, override: str | None, previous: str | None) -> Language:
    """The answer language: the override; else the message's language when the detector is sure
    (a short or ambiguous message keeps the previous language); else English."""
    if override:
        return resolve_lang(override)
    found = detect_language(message)
    words = len(re.findall(r"[^\W\d_]{2,}", message))
    if found.supported and found.code in LANGUAGES:
        sure = words >= MIN_WORDS_TO_SWITCH and found.score >= MIN_SCORE_TO_SWITCH
        if previous is None or sure:
            return resolve_lang(found.code)
    return resolve_lang(previous) if previous else DEFAULT_LANGUAGE


def language_from_header(accept_language: str | None) -> Language:
    """The most wanted of our languages in an HTTP Accept-Language header, by q weight then
    order ('tr-TR,tr;q=0.9,en;q=0.8' -> 'tr'); English when it names none of them."""
    weighted: list[tuple[float, int, Language]] = []
    for position, part in enumerate((accept_language or "").split(",")):
        tag, _, params = part.strip().partition(";")
        code = tag.strip().lower().split("-")[0]
        weight = _q_weight(params)
        if code in LANGUAGES and weight > 0:
            weighted.append((-weight, position, resolve_lang(code)))
    return min(weighted)[2] if weighted else DEFAULT_LANGUAGE


def _q_weight(params: str) -> float:
    text = params.strip().replace(" ", "")
    if not text.startswith("q="):
        return 1.0
    try:
        return float(text[2:])
    except ValueError:
        return 0.0
