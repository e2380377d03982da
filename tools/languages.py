"""The six languages GPU Advisor speaks, defined once: codes, names and Babel locales.

The knowledge base holds every entry in these languages, answers are written in them and the
interface is translated into them. Which language a turn is answered in is decided in
`assistant.languages`.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

Language = Literal["en", "nl", "fr", "tr", "de", "es"]
LANGUAGES: Final[tuple[Language, ...]] = get_args(Language)
DEFAULT_LANGUAGE: Final[Language] = "en"
# Each language's own name for itself (what a language picker shows).
LANGUAGE_NAMES: Final[dict[Language, str]] = {
    "en": "English",
    "nl": "Nederlands",
    "fr": "Français",
    "tr": "Türkçe",
    "de": "Deutsch",
    "es": "Español",
}
# The locale whose number, money and date formats each language's text uses.
LOCALES: Final[dict[Language, str]] = {
    "en": "en_US",
    "nl": "nl_NL",
    "fr": "fr_FR",
    "tr": "tr_TR",
    "de": "de_DE",
    "es": "es_ES",
}


def is_language(code: object) -> bool:
    """Whether `code` is one of the six language codes."""
    return code in LANGUAGES
