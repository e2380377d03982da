"""BM25 over chunks with language-aware stemming: bm25s for scoring, PyStemmer (Snowball) for stems.

Each language gets its own BM25 index, tokenised with that language's Snowball stemmer and bm25s's
stop-word list, so a Dutch query is stemmed the Dutch way and scored against Dutch chunks with Dutch
document frequencies. A query in a language the knowledge base does not have (Italian,
Portuguese...) is scored against the English index, the lingua franca of the field's vocabulary
(measured on the benchmark's dev split: better than scoring every language, see
benchmarks/README.md); without an English index, against every language's index, each score divided
by that index's best score.

Dutch and German write compounds as one word ("consumentenkaarten", "Speicherbedarf"), which
Snowball does not split, so a query saying "gamekaart" never meets a passage saying
"consumentenkaarten". For these two languages every word is also split into parts that are words of
the knowledge base itself (frequency-based splitting after Koehn & Knight 2003, "Empirical methods
for compound splitting"): the split whose parts have the highest geometric mean of corpus
frequencies wins, the unsplit word competing with its own frequency. A word the corpus has never
seen that has no full split still yields its longest known final part, the compound's head
("gamekaart" -> "kaart"). The parts are added next to the whole word, in documents and queries
alike, before stemming.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
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
# Linking elements allowed between compound parts (Dutch "-s-", "-en-", "-e-"; German "-s-",
# "-es-", "-n-", "-en-", "-e-", "-er-"); only these languages are split.
COMPOUND_LINKS: dict[str, tuple[str, ...]] = {
    "nl": ("", "s", "en", "e"),
    "de": ("", "s", "es", "n", "en", "e", "er"),
}
MIN_PART = 3  # letters in a compound part
MIN_HEAD = 4  # letters in a head taken alone from an unknown word
MAX_PARTS = 3
# Index that scores queries in languages without an index of their own.
FALLBACK_LANG = "en"


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


class CompoundSplitter:
    """Splits words into parts found in a vocabulary with corpus frequencies (Koehn & Knight 2003).

    `links` are the linking elements that may follow a non-final part (e.g. Dutch "s" in
    "checkpointsinterval"); "" means parts may also join directly.
    """

    def __init__(self, counts: Counter[str], links: Sequence[str] = ("",)) -> None:
        self.counts = counts
        self.links = tuple(links)

    @classmethod
    def from_texts(cls, texts: Iterable[str], lang: str) -> CompoundSplitter:
        """A splitter whose vocabulary is the words (stop words removed) of `texts` in `lang`."""
        stop = _stopwords(lang)
        counts: Counter[str] = Counter()
        for text in texts:
            counts.update(w for w in _TOKEN.findall(text.lower()) if w not in stop)
        return cls(counts, COMPOUND_LINKS.get(lang, ("",)))

    def parts(self, word: str) -> list[str]:
        """The parts of `word` when splitting it scores better than keeping it whole, else []."""
        best: list[str] = []
        best_score = float(self.counts.get(word, 0))
        for split in self._splits(word, MAX_PARTS):
            if len(split) < 2:
                continue
            score = math.prod(self.counts[p] for p in split) ** (1 / len(split))
            if score > best_score:
                best, best_score = split, score
        if best or word in self.counts:
            return best
        return self._head(word)

    def _splits(self, word: str, max_parts: int) -> list[list[str]]:
        """Every way to write `word` as known parts (with linking elements between them)."""
        found = [[word]] if word in self.counts else []
        if max_parts < 2:
            return found
        for cut in range(MIN_PART, len(word) - MIN_PART + 1):
            first = word[:cut]
            if first not in self.counts:
                continue
            for link in self.links:
                rest = word[cut:]
                if not rest.startswith(link) or len(rest) - len(link) < MIN_PART:
                    continue
                for tail in self._splits(rest[len(link) :], max_parts - 1):
                    found.append([first, *tail])
        return found

    def _head(self, word: str) -> list[str]:
        """The longest known final part of an unknown word, leaving at least MIN_PART letters."""
        for cut in range(MIN_PART, len(word) - MIN_HEAD + 1):
            if word[cut:] in self.counts:
                return [word[cut:]]
        return []


def tokenize(text: str, lang: str, splitter: CompoundSplitter | None = None) -> list[str]:
    """Lowercased word tokens of `text`, stop words of `lang` removed, stemmed for `lang`.

    With a `splitter`, each word is followed by its compound parts (if it splits).
    """
    stop = _stopwords(lang)
    words = [w for w in _TOKEN.findall(text.lower()) if w not in stop]
    if splitter is not None:
        words = [piece for w in words for piece in (w, *splitter.parts(w))]
    stemmer = _stemmer(lang)
    return list(stemmer.stemWords(words)) if stemmer is not None and words else words


class LanguageBM25:
    """One bm25s index per chunk language; scores come back aligned with the input chunk order."""

    def __init__(self, chunks: Sequence[Chunk]) -> None:
        import bm25s

        self.size = len(chunks)
        self._rows: dict[str, np.ndarray] = {}
        self._indexes: dict[str, Any] = {}
        self._splitters: dict[str, CompoundSplitter] = {}
        for lang in sorted({c.lang for c in chunks}):
            rows = np.array([i for i, c in enumerate(chunks) if c.lang == lang], dtype=np.int64)
            splitter = None
            if lang in COMPOUND_LINKS:
                splitter = CompoundSplitter.from_texts((chunks[i].index_text for i in rows), lang)
                self._splitters[lang] = splitter
            corpus = [tokenize(chunks[i].index_text, lang, splitter) or ["_"] for i in rows]
            index = bm25s.BM25()
            index.index(corpus, show_progress=False)
            self._rows[lang] = rows
            self._indexes[lang] = index

    @property
    def languages(self) -> list[str]:
        return list(self._indexes)

    def scores(self, query: str, lang: str | None) -> np.ndarray:
        """BM25 score of every chunk (0 for chunks not scored) for `query` written in `lang`.

        A query in an indexed language is scored against that language only, any other query
        against the `FALLBACK_LANG` index; without that index, against every language, each score
        divided by its language's best score so they compare.
        """
        out = np.zeros(self.size, dtype=np.float32)
        for own in (lang, FALLBACK_LANG):
            if own in self._indexes:
                self._score_into(out, query, own, normalise=False)
                return out
        for other in self._indexes:
            self._score_into(out, query, other, normalise=True)
        return out

    def _score_into(self, out: np.ndarray, query: str, lang: str, normalise: bool) -> None:
        tokens = tokenize(query, lang, self._splitters.get(lang))
        if not tokens:
            return
        scores = np.asarray(self._indexes[lang].get_scores(tokens), dtype=np.float32)
        best = float(scores.max()) if scores.size else 0.0
        if normalise and best > 0:
            scores = scores / best
        out[self._rows[lang]] = scores
