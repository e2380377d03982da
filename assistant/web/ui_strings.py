"""The web app's interface strings in the six languages, defined once, and its example prompts.

The table lives in `assistant/web/ui_strings.yaml`: every key holds its text in en, nl, fr, tr, de
and es. The app hands `i18n_tables()` to `gr.I18n`, which translates labels in the browser by
its locale; the server uses `ui_text(lang, key)` for text it renders itself (table headers,
chart labels) in the conversation's language. Answers are not here: they come from the message
catalogs of `assistant.answers.i18n`.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

import yaml

from tools.languages import DEFAULT_LANGUAGE, LANGUAGES

_DATA_FILE = "ui_strings.yaml"  # inside the `assistant` package


class UIStringsError(ValueError):
    """The strings file is missing a language or holds something other than text."""


@cache
def _table() -> tuple[dict[str, dict[str, str]], dict[str, tuple[str, ...]]]:
    text = resources.files("assistant.web").joinpath(_DATA_FILE).read_text(encoding="utf-8")
    raw = yaml.safe_load(text)
    strings: dict[str, dict[str, str]] = {}
    for key, texts in raw["strings"].items():
        if not isinstance(texts, dict) or set(texts) != set(LANGUAGES):
            raise UIStringsError(f"{_DATA_FILE}: {key!r} needs exactly {', '.join(LANGUAGES)}")
        if not all(isinstance(v, str) and v.strip() for v in texts.values()):
            raise UIStringsError(f"{_DATA_FILE}: {key!r} has an empty or non-text entry")
        strings[str(key)] = {lang: texts[lang] for lang in LANGUAGES}
    examples: dict[str, tuple[str, ...]] = {
        lang: tuple(raw["examples"][lang]) for lang in LANGUAGES
    }
    return strings, examples


def ui_keys() -> list[str]:
    """Every interface string key, in file order."""
    return list(_table()[0])


def ui_text(lang: str, key: str) -> str:
    """The interface string `key` in `lang` (English for a language the table lacks)."""
    texts = _table()[0][key]
    return texts.get(lang, texts[DEFAULT_LANGUAGE])


def i18n_tables() -> dict[str, dict[str, str]]:
    """The whole table by language, the shape `gr.I18n(**tables)` takes."""
    strings = _table()[0]
    return {lang: {key: texts[lang] for key, texts in strings.items()} for lang in LANGUAGES}


def example_prompts() -> list[tuple[str, str]]:
    """(language, prompt) for every example prompt, languages in `LANGUAGES` order."""
    examples = _table()[1]
    return [(lang, prompt) for lang in LANGUAGES for prompt in examples[lang]]
