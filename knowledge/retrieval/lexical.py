"""BM25 over chunks with language-aware stemming: bm25s for scoring, PyStemmer (Snowball) for stems.

Each language gets its own BM25 index, tokenised with that language's Snowball stemmer and bm25s's
stop-word list, so a Dutch query is stemmed the Dutch way and scored against Dutch chunks with Dutch
document frequencies. A query in a language the knowledge base does not have (Italian,
Portuguese...) is scored against the English index, the lingua franca of the field's vocabulary
(measured on the benchmark's dev split: better than scoring every language, see
benchmarks/README.md); without an English index, against every language's index, each score divided
by that index's best score.

Each chunk is indexed with its entry's `terms` and its heading counted twice (`keyword_text`).
Query words the entries never use are read as entry words first (`knowledge.retrieval.spelling`:
accents, Turkish letters, written-out umlauts, one typo), for queries in the index's own language.
Compound splitting for Dutch and German: `knowledge.retrieval.compounds`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from knowledge.documents.chunking import Chunk
from knowledge.retrieval.compounds import COMPOUND_LINKS, CompoundSplitter
from knowledge.retrieval.recent import Recent
from knowledge.retrieval.sentences import bm25_idf
from knowledge.retrieval.spelling import Speller
from knowledge.retrieval.text import TOKEN, tokenize

# Index that scores queries in languages without an index of their own.
FALLBACK_LANG = "en"


# Detectors are unreliable on queries this short (in words): the vocabulary votes instead.
SHORT_QUERY_WORDS = 5
CACHED_QUERIES = 256  # queries whose scores are kept (one float32 per chunk each)


def vote_language(words: Sequence[str], spellers: Mapping[str, Speller]) -> str | None:
    """The language whose entries know the most of `words` (as written, or read by its
    `Speller`), counting only telling words: those known in some languages but not in all
    ("nvlink", "lora", "gpu" tell nothing). None when no word tells or languages tie."""
    known = {lang: {w for w in words if speller.knows(w)} for lang, speller in spellers.items()}
    everywhere = set.intersection(*known.values()) if known else set()
    counts = {lang: len(found - everywhere) for lang, found in known.items()}
    best = max(counts.values(), default=0)
    winners = [lang for lang, count in counts.items() if count == best]
    return winners[0] if best > 0 and len(winners) == 1 else None


def keyword_text(chunk: Chunk) -> str:
    """What BM25 indexes for a chunk: its indexed text, the entry's `terms`, and its heading
    (the title, and an FAQ's alternative questions) a second time, so a word of the heading
    counts twice, as in field-weighted BM25 (Robertson et al. 2004)."""
    heading = chunk.index_text.split("\n\n", 1)[0]
    return f"{chunk.index_text}\n{chunk.terms}\n{heading}"


class LanguageBM25:
    """One bm25s index per chunk language; scores come back aligned with the input chunk order."""

    def __init__(self, chunks: Sequence[Chunk]) -> None:
        import bm25s

        self.size = len(chunks)
        self._rows: dict[str, np.ndarray] = {}
        self._indexes: dict[str, Any] = {}
        self._splitters: dict[str, CompoundSplitter] = {}
        self._spellers: dict[str, Speller] = {}
        self._scores: Recent[tuple[str, str | None], np.ndarray] = Recent(CACHED_QUERIES)
        self._frequency: dict[str, tuple[int, Counter[str]]] = {}  # lang -> (chunks, df)
        self._vocabulary: dict[str, list[frozenset[str]]] = {}  # lang -> each chunk's terms
        for lang in sorted({c.lang for c in chunks}):
            rows = np.array([i for i, c in enumerate(chunks) if c.lang == lang], dtype=np.int64)
            texts = [keyword_text(chunks[i]) for i in rows]
            splitter = None
            if lang in COMPOUND_LINKS:
                splitter = CompoundSplitter.from_texts(texts, lang)
                self._splitters[lang] = splitter
            parts = splitter.parts if splitter is not None else None
            corpus = [tokenize(text, lang, parts) or ["_"] for text in texts]
            words: Counter[str] = Counter()
            for text in texts:
                words.update(TOKEN.findall(text.lower()))
            self._spellers[lang] = Speller(words)
            self._frequency[lang] = (len(corpus), Counter(t for doc in corpus for t in set(doc)))
            self._vocabulary[lang] = [frozenset(doc) for doc in corpus]
            index = bm25s.BM25()
            index.index(corpus, show_progress=False)
            self._rows[lang] = rows
            self._indexes[lang] = index

    @property
    def languages(self) -> list[str]:
        return list(self._indexes)

    def language_of(self, query: str, max_words: int = SHORT_QUERY_WORDS) -> str | None:
        """The one language whose entries use the most of a short query's telling words, else
        None (see `vote_language`)."""
        words = [w for w in TOKEN.findall(query.lower()) if not w.isdigit()]
        if not words or len(words) > max_words:
            return None
        return vote_language(words, self._spellers)

    def terms(self, text: str, lang: str, query: bool) -> list[str]:
        """`text` tokenised as `lang`'s index reads its chunks (a `query`: its unknown words read
        as the entries' words first); plainly tokenised for a language without an index."""
        if lang not in self._indexes:
            return tokenize(text, lang)
        splitter = self._splitters.get(lang)
        reading = self._spellers[lang].read if query else None
        return tokenize(text, lang, splitter.parts if splitter is not None else None, reading)

    def idf(self, lang: str, term: str) -> float:
        """BM25's idf of `term` over `lang`'s chunks (a term no chunk has: the rarest weight)."""
        documents, frequency = self._frequency.get(lang, (1, Counter()))
        return bm25_idf(documents, frequency.get(term, 0))

    def coverage(self, query: str, lang: str) -> float:
        """How much of `query` one chunk of `lang` (else of the fallback language) holds: the
        idf-weighted share of the query's distinct terms found in its best chunk, from 0 (no
        chunk has any) to 1 (one chunk has them all). A word no entry uses weighs the most, so
        a question about something the knowledge base does not cover scores low."""
        own = lang if lang in self._vocabulary else FALLBACK_LANG
        if own not in self._vocabulary:
            return 0.0
        wanted = {t: self.idf(own, t) for t in set(self.terms(query, own, own == lang))}
        total = sum(wanted.values())
        if total <= 0:
            return 0.0
        best = max(sum(w for t, w in wanted.items() if t in doc) for doc in self._vocabulary[own])
        return best / total

    def scores(self, query: str, lang: str | None) -> np.ndarray:
        """BM25 score of every chunk (0 for chunks not scored) for `query` written in `lang`
        (read-only).

        A query in an indexed language is scored against that language only, any other query
        against the `FALLBACK_LANG` index; without that index, against every language, each score
        divided by its language's best score so they compare.

        The scores of the last `CACHED_QUERIES` queries are kept: the chat's caveat searches ask
        the same query in every turn of a spot or multi-GPU job (its tokenising, spelling and
        scoring took about 1.5 ms of CPU). An index is never changed, so a kept score is the one
        it would compute again; a rebuilt knowledge base makes a new `LanguageBM25`.
        """
        return self._scores.get_or_make(
            (query, lang), lambda: _read_only(self._compute(query, lang))
        )

    def _compute(self, query: str, lang: str | None) -> np.ndarray:
        out = np.zeros(self.size, dtype=np.float32)
        for own in (lang, FALLBACK_LANG):
            if own in self._indexes:
                self._score_into(out, query, own, normalise=False, read=own == lang)
                return out
        for other in self._indexes:
            self._score_into(out, query, other, normalise=True, read=False)
        return out

    def _score_into(
        self, out: np.ndarray, query: str, lang: str, normalise: bool, read: bool
    ) -> None:
        """Scores of `lang`'s chunks into `out`; `read`: the query is in `lang`, so its unknown
        words are read as the entries' words (`spelling.Speller`)."""
        splitter = self._splitters.get(lang)
        parts = splitter.parts if splitter is not None else None
        reading = self._spellers[lang].read if read else None
        tokens = tokenize(query, lang, parts, reading)
        if not tokens:
            return
        scores = np.asarray(self._indexes[lang].get_scores(tokens), dtype=np.float32)
        best = float(scores.max()) if scores.size else 0.0
        if normalise and best > 0:
            scores = scores / best
        out[self._rows[lang]] = scores


def _read_only(scores: np.ndarray) -> np.ndarray:
    scores.setflags(write=False)
    return scores
