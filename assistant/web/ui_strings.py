"""The web app's interface strings in the six languages, defined once, and its example requests.

The table lives in `assistant/web/ui_strings.yaml`: every key holds its text in en, nl, fr, tr, de
and es. The app hands `i18n_tables()` to `gr.I18n`, which translates labels in the browser (and
switches them when the interface language changes); the server uses `ui_text(lang, key)` and
`ui_format(lang, key, **values)` for the text it renders itself (table headers and cells, charts,
notes, hints). The form's choices for method, precision and spot reuse the words of the answer
catalogs (`assistant.answers.i18n`), so the chat and the form name them alike: `vocabulary_key`
names them in the table `i18n_tables` returns. Answers are not here.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

import yaml

from assistant.answers.i18n import has_message, message
from tools.enums import Checkpointing, Method, Precision, SpotPolicy, choices
from tools.languages import DEFAULT_LANGUAGE, LANGUAGES

_DATA_FILE = "ui_strings.yaml"  # inside the `assistant` package
MIN_EXAMPLES, MAX_EXAMPLES = 4, 6  # example requests per language on the first screen
# Answer-catalog words the interface reuses: (vocabulary, its values); `_ANSWER_KEYS` says where
# the answer catalogs keep each word.
_VOCABULARY: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("method", choices(Method)),
    ("precision", choices(Precision)),
    ("spot", choices(SpotPolicy)),
    ("pricing", ("on-demand", "spot")),
    ("checkpointing", choices(Checkpointing)),
)
_ANSWER_KEYS = {
    "method": "method.{}",
    "precision": "precision.{}",
    "spot": "value.spot_{}",
    "pricing": "pricing.{}",
    "plan": "plan.{}",
    "exclusion": "none.kind.{}",
    "checkpointing": "value.checkpointing_{}",
}


class UIStringsError(ValueError):
    """The strings file is missing a language or holds something other than text."""


def _texts(section: dict[str, object]) -> dict[str, dict[str, str]]:
    """Each key's text in the six languages (all six, none empty)."""
    found: dict[str, dict[str, str]] = {}
    for key, texts in section.items():
        if not isinstance(texts, dict) or set(texts) != set(LANGUAGES):
            raise UIStringsError(f"{_DATA_FILE}: {key!r} needs exactly {', '.join(LANGUAGES)}")
        if not all(isinstance(v, str) and v.strip() for v in texts.values()):
            raise UIStringsError(f"{_DATA_FILE}: {key!r} has an empty or non-text entry")
        found[str(key)] = {lang: texts[lang] for lang in LANGUAGES}
    return found


@cache
def _raw() -> Any:
    """The file, read once, with libyaml's parser where PyYAML has it (the pure-Python one
    takes about a second of the app's start for this file)."""
    text = resources.files("assistant.web").joinpath(_DATA_FILE).read_text(encoding="utf-8")
    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


@cache
def _gradio_strings() -> dict[str, dict[str, str]]:
    return _texts(_raw().get("gradio") or {})


@cache
def _table() -> tuple[dict[str, dict[str, str]], dict[str, tuple[str, ...]]]:
    raw = _raw()
    strings = _texts(raw["strings"])
    examples: dict[str, tuple[str, ...]] = {}
    for lang in LANGUAGES:
        found = tuple(raw["examples"][lang])
        if not MIN_EXAMPLES <= len(found) <= MAX_EXAMPLES:
            raise UIStringsError(
                f"{_DATA_FILE}: {lang} needs {MIN_EXAMPLES}-{MAX_EXAMPLES} examples"
            )
        examples[lang] = found
    return strings, examples


def ui_keys() -> list[str]:
    """Every interface string key, in file order."""
    return list(_table()[0])


def ui_lang(lang: str | None) -> str:
    """`lang` when the interface has it, else English."""
    return lang if lang in LANGUAGES else DEFAULT_LANGUAGE


def ui_text(lang: str, key: str) -> str:
    """The interface string `key` in `lang` (English for a language the table lacks)."""
    texts = _table()[0][key]
    return texts.get(lang, texts[DEFAULT_LANGUAGE])


def ui_format(lang: str, key: str, **values: object) -> str:
    """The interface string `key` in `lang` with its `{name}` places filled in (values are
    formatted by the caller, in the same language)."""
    return ui_text(lang, key).format(**values)


def vocabulary_key(kind: str, value: str) -> str:
    """The key under which `i18n_tables` holds an answer-catalog word, e.g.
    ('method', 'full') -> 'vocab_method_full'."""
    return f"vocab_{kind}_{value.replace('-', '_')}"


def vocabulary(lang: str, kind: str, value: str) -> str:
    """The answer catalogs' words for `value` of vocabulary `kind` (method, precision, spot,
    pricing, plan, exclusion): ('method', 'full') -> 'full fine-tuning'; the value itself where
    they have none."""
    key = _ANSWER_KEYS[kind].format(value)
    return message(lang, key) if has_message(lang, key) else value


def i18n_tables() -> dict[str, dict[str, str]]:
    """The whole table by language, the shape `gr.I18n(**tables)` takes: the interface strings,
    the answer-catalog words of the form's choices, and the Gradio strings its own tables lack
    (under Gradio's message ids, e.g. 'chatbot.copy_message')."""
    strings = _table()[0]
    tables: dict[str, dict[str, str]] = {}
    for lang in LANGUAGES:
        table = {key: texts[lang] for key, texts in strings.items()}
        for kind, values in _VOCABULARY:
            table |= {vocabulary_key(kind, v): vocabulary(lang, kind, v) for v in values}
        table |= {key: texts[lang] for key, texts in _gradio_strings().items()}
        tables[lang] = table
    return tables


def fixed_english() -> dict[str, dict[str, str]]:
    """What Gradio's components write in English whatever the locale (a title or aria-label
    its tables do not cover), by that English: its text in each language."""
    return _texts(_raw().get("gradio_fixed") or {})


def example_prompts(lang: str) -> tuple[str, ...]:
    """The example requests of the first screen in `lang` (English for another language)."""
    return _table()[1][ui_lang(lang)]
