"""The word lists extraction and intent classification read, from package data files.

`lexicon/common.yaml` holds language-independent names (currencies, providers, precisions,
optimizers, region names); `lexicon/<lang>.yaml` holds one language's words, and its
`everyday` list the greetings, thanks and commonest function words that tell the language of
a very short message (`everyday_words`, read by `assistant.languages` only). Phrase categories
are merged over all languages (people mix English terms into every language, and a short
follow-up is often detected as the wrong language); number words stay per language, because
they collide across languages (Turkish "on" is ten).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from assistant.extract.text import fold
from tools.languages import LANGUAGES, Language

_PACKAGE = "assistant.extract"


@dataclass(frozen=True)
class Lexicon:
    """Folded phrases by category (all languages), plus per-language number words."""

    phrases: Mapping[str, tuple[str, ...]]
    magnitudes: Mapping[str, Mapping[str, float]]
    number_words: Mapping[str, Mapping[str, int]]

    def get(self, category: str) -> tuple[str, ...]:
        """The phrases of `category` (empty when no language has any)."""
        return self.phrases.get(category, ())

    def by_prefix(self, prefix: str) -> dict[str, tuple[str, ...]]:
        """Categories under `prefix` ("spot." -> {"never": ..., ...}), keyed by the rest."""
        return {k[len(prefix) :]: v for k, v in self.phrases.items() if k.startswith(prefix)}

    def magnitudes_for(self, lang: str) -> dict[str, float]:
        """Magnitude words and their multipliers as read in `lang`: every language's words,
        the first language in LANGUAGES order winning a clash, then `lang`'s own on top
        (German "Billion" is 1e12, English "billion" 1e9)."""
        merged: dict[str, float] = dict(self.magnitudes.get("common", {}))
        for name in LANGUAGES:
            for word, value in self.magnitudes.get(name, {}).items():
                merged.setdefault(word, value)
        merged.update(self.magnitudes.get(lang, {}))
        return merged

    def vocabulary(self) -> list[str]:
        """Every phrase, magnitude and number word: material for fuzzing."""
        words = {p for group in self.phrases.values() for p in group}
        for tables in (self.magnitudes, self.number_words):
            for table in tables.values():
                words |= set(table)
        return sorted(words)


def _read(name: str) -> dict[str, Any]:
    import yaml  # deferred: only when the lexicon is first used

    text = resources.files(_PACKAGE).joinpath(f"lexicon/{name}.yaml").read_text(encoding="utf-8")
    data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    if not isinstance(data, dict):
        raise ValueError(f"lexicon/{name}.yaml: expected a mapping at the top level")
    return data


def _text(name: str, category: str, item: object) -> str:
    """A phrase as written; YAML reads bare no/off/on/yes as booleans, so those need quotes."""
    if not isinstance(item, str):
        raise ValueError(f"lexicon/{name}.yaml: {category}: {item!r} is not text; quote it")
    return item


@cache
def lexicon() -> Lexicon:
    """All lexicon files, folded and merged; read once."""
    phrases: dict[str, list[str]] = {}
    magnitudes: dict[str, dict[str, float]] = {}
    numbers: dict[str, dict[str, int]] = {}
    common = _read("common")
    for name, data in [("common", common)] + [(lang, _read(lang)) for lang in LANGUAGES]:
        for category, items in (data.get("phrases") or {}).items():
            phrases.setdefault(category, []).extend(fold(_text(name, category, p)) for p in items)
        table = data.get("magnitudes") or {}
        magnitudes[name] = {fold(str(word)): float(value) for word, value in table.items()}
        if name != "common":
            words = data.get("number_words") or {}
            numbers[name] = {fold(str(w)): int(v) for w, v in words.items()}
    return Lexicon(
        phrases={k: tuple(dict.fromkeys(v)) for k, v in phrases.items()},
        magnitudes=magnitudes,
        number_words=numbers,
    )


_MIN_LETTERS = 3
_SHARED_IN = 3  # a word in this many languages' lexicons is jargon, not a language's own


@cache
def language_words() -> tuple[dict[Language, frozenset[str]], frozenset[str]]:
    """Per language, the lexicon words only that language has ("stunden", "uur", "saatte");
    and the words shared by several languages or language-independent ("tokens", "lora",
    "budget"), which say nothing about the language of a message."""
    import re

    def words_of(data: dict[str, Any]) -> set[str]:
        found: set[str] = set()
        texts = [str(p) for items in (data.get("phrases") or {}).values() for p in items]
        texts += [str(w) for key in ("number_words", "magnitudes") for w in data.get(key) or {}]
        for text in texts:
            found |= {w for w in re.findall(r"[^\W\d_]+", fold(text)) if len(w) >= _MIN_LETTERS}
        return found

    per_lang = {lang: words_of(_read(lang)) for lang in LANGUAGES}
    counts: dict[str, int] = {}
    for words in per_lang.values():
        for word in words:
            counts[word] = counts.get(word, 0) + 1
    shared = {w for w, n in counts.items() if n >= _SHARED_IN} | words_of(_read("common"))
    own = {lang: frozenset(w for w in words if counts[w] == 1 and w not in shared)
           for lang, words in per_lang.items()}  # fmt: skip
    return own, frozenset(shared)


@cache
def everyday_words() -> dict[Language, tuple[str, ...]]:
    """Per language, its everyday words and phrases (greetings, thanks, "how are you", the
    commonest function words), folded; several languages may share one ("hallo")."""
    table: dict[Language, tuple[str, ...]] = {}
    for lang in LANGUAGES:
        items = _read(lang).get("everyday") or []
        table[lang] = tuple(dict.fromkeys(fold(_text(lang, "everyday", w)) for w in items))
    return table
