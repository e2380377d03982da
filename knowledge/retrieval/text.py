"""Word tokens for BM25: lowercased words, stop words removed, Snowball stems per language.

PyStemmer (Snowball) stems; the stop-word lists are NLTK's, as shipped by bm25s.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from typing import Any

# A word -> its compound parts ([] when it does not split), e.g. `CompoundSplitter.parts`.
Parts = Callable[[str], Sequence[str]]
# A query word -> the word of the entries it is read as, e.g. `Speller.read`.
Reading = Callable[[str], str]

# ISO 639-1 -> Snowball algorithm name in PyStemmer.
SNOWBALL: dict[str, str] = {
    "en": "english",
    "nl": "dutch",
    "fr": "french",
    "tr": "turkish",
    "de": "german",
    "es": "spanish",
    "it": "italian",
    "pt": "portuguese",
    "da": "danish",
    "sv": "swedish",
    "no": "norwegian",
    "fi": "finnish",
    "ru": "russian",
}
# ISO 639-1 -> stop-word list in bm25s.stopwords (NLTK's lists, as shipped by bm25s).
STOPWORDS: dict[str, str] = {
    "en": "STOPWORDS_EN",
    "nl": "STOPWORDS_DUTCH",
    "fr": "STOPWORDS_FRENCH",
    "tr": "STOPWORDS_TURKISH",
    "de": "STOPWORDS_GERMAN",
    "es": "STOPWORDS_SPANISH",
    "it": "STOPWORDS_ITALIAN",
    "pt": "STOPWORDS_PORTUGUESE",
}
TOKEN = re.compile(r"(?u)\b\w\w+\b")


@functools.lru_cache(maxsize=32)
def stemmer(lang: str) -> Any:
    import Stemmer

    algorithm = SNOWBALL.get(lang)
    return Stemmer.Stemmer(algorithm) if algorithm else None


@functools.lru_cache(maxsize=32)
def stopwords(lang: str) -> frozenset[str]:
    import bm25s.stopwords

    name = STOPWORDS.get(lang)
    return frozenset(getattr(bm25s.stopwords, name)) if name else frozenset()


def tokenize(
    text: str, lang: str, parts: Parts | None = None, read: Reading | None = None
) -> list[str]:
    """Lowercased word tokens of `text`, stop words of `lang` removed, stemmed for `lang`.

    With `read` (queries), each word is first read as a word of the entries (`Speller.read`);
    with `parts`, each word is followed by its compound parts (if it splits).
    """
    stop = stopwords(lang)
    words = [w for w in TOKEN.findall(text.lower()) if w not in stop]
    if read is not None:
        words = [read(w) for w in words]
    if parts is not None:
        words = [piece for w in words for piece in (w, *parts(w))]
    snowball = stemmer(lang)
    return list(snowball.stemWords(words)) if snowball is not None and words else words
