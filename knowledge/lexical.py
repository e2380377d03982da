"""BM25 over chunks with language-aware stemming: bm25s for scoring, PyStemmer (Snowball) for stems.

Each language gets its own BM25 index, tokenised with that language's Snowball stemmer and bm25s's
stop-word list, so a Dutch query is stemmed the Dutch way and scored against Dutch chunks with Dutch
document frequencies. A query in a language the knowledge base does not have is scored against every
language's index (each with its own stemmer) and the per-language scores are compared after dividing
by each index's best score.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from knowledge.chunking import Chunk

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
_TOKEN = re.compile(r"(?u)\b\w\w+\b")


@functools.lru_cache(maxsize=32)
def _stemmer(lang: str) -> Any:
    import Stemmer

    algorithm = SNOWBALL.get(lang)
    return Stemmer.Stemmer(algorithm) if algorithm else None


@functools.lru_cache(maxsize=32)
def _stopwords(lang: str) -> frozenset[str]:
    import bm25s.stopwords

    name = STOPWORDS.get(lang)
    return frozenset(getattr(bm25s.stopwords, name)) if name else frozenset()


def tokenize(text: str, lang: str) -> list[str]:
    """Lowercased word tokens of `text`, stop words of `lang` removed, stemmed for `lang`."""
    stop = _stopwords(lang)
    words = [w for w in _TOKEN.findall(text.lower()) if w not in stop]
    stemmer = _stemmer(lang)
    return list(stemmer.stemWords(words)) if stemmer is not None and words else words


class LanguageBM25:
    """One bm25s index per chunk language; scores come back aligned with the input chunk order."""

    def __init__(self, chunks: Sequence[Chunk]) -> None:
        import bm25s

        self.size = len(chunks)
        self._rows: dict[str, np.ndarray] = {}
        self._indexes: dict[str, Any] = {}
        for lang in sorted({c.lang for c in chunks}):
            rows = np.array([i for i, c in enumerate(chunks) if c.lang == lang], dtype=np.int64)
            corpus = [tokenize(chunks[i].index_text, lang) or ["_"] for i in rows]
            index = bm25s.BM25()
            index.index(corpus, show_progress=False)
            self._rows[lang] = rows
            self._indexes[lang] = index

    @property
    def languages(self) -> list[str]:
        return list(self._indexes)

    def scores(self, query: str, lang: str | None) -> np.ndarray:
        """BM25 score of every chunk (0 for chunks not scored) for `query` written in `lang`.

        A query in an indexed language is scored against that language only; otherwise against
        every language, each score divided by its language's best score so they compare.
        """
        out = np.zeros(self.size, dtype=np.float32)
        if lang in self._indexes:
            self._score_into(out, query, lang, normalise=False)
            return out
        for other in self._indexes:
            self._score_into(out, query, other, normalise=True)
        return out

    def _score_into(self, out: np.ndarray, query: str, lang: str, normalise: bool) -> None:
        tokens = tokenize(query, lang)
        if not tokens:
            return
        scores = np.asarray(self._indexes[lang].get_scores(tokens), dtype=np.float32)
        best = float(scores.max()) if scores.size else 0.0
        if normalise and best > 0:
            scores = scores / best
        out[self._rows[lang]] = scores
