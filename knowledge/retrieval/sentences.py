"""The sentences of an entry that answer a question, not just its best chunk (issue 25).

An entry's chunk is a paragraph; the fact a question asks for ("how much slower is gradient
checkpointing?": "roughly 30% more compute") often sits in another paragraph of the same entry.
`answer_excerpt` scores every sentence of the entry in the passage's language against the query
with BM25 at sentence level (the language's stemming, compound parts and spelling reading, and
the document frequencies of its chunk index: `LanguageBM25.terms`, `idf`), and returns the best
two or three in the entry's order. Two signals beside the words:

- a question for a quantity ("how much", "hoe vaak", "combien", "ne kadar", "wie oft",
  "cuánto", see `QUANTITY`) prefers sentences that state a number;
- the paragraph retrieval ranked best for the query is preferred a little (`CHUNK_PRIOR`).

An entry no query word reaches gets no excerpt: the answer shows the chunk as before.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from knowledge.documents.chunking import Chunk
from knowledge.retrieval.passages import Passage

if TYPE_CHECKING:
    from knowledge.retrieval.lexical import LanguageBM25

__all__ = ["QUANTITY", "answer_excerpt", "bm25_idf", "split_sentences", "with_excerpts"]

# Questions for an amount, a frequency, a duration or a size, per language (the six the
# knowledge base is written in).
QUANTITY: Final = {
    "en": r"\bhow (?:much|many|often|long|big|large|fast|slow\w*)\b|\bwhat (?:size|share)\b",
    "nl": r"\bhoe(?:veel| vaak| lang| groot| snel| traag)\b",
    "fr": r"\bcombien\b|\bquelle (?:taille|fréquence|durée|part)\b|\btous les combien\b",
    "tr": r"\bne kadar\b|\bkaç\b|\bne sıklıkla\b|\bhangi sıklıkla\b",
    "de": r"\bwie (?:viel\w*|oft|lange|groß|schnell|langsam\w*)\b",
    "es": r"\bcu[aá]nt[oa]s?\b|\bcada cu[aá]nto\b|\bqu[eé] tamaño\b",
}
_QUANTITY = {lang: re.compile(pattern, re.IGNORECASE) for lang, pattern in QUANTITY.items()}
_NUMBER = re.compile(r"\d")
# A sentence ends at . ! ? followed by space and a capital, a digit or an opening mark.
_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(`*\[¿¡]?[A-ZÀ-ÞİŞĞÇÖÜ0-9])")
# ... unless the period closes one of these abbreviations or a lowercase letter (z. B., d. h.).
_ABBREVIATION = re.compile(
    r"(?:\bal|\be\.g|\bi\.e|\bvs|\bca|\bcf|\bbzw|\bz\.\s?B|\bd\.\s?h|\bu\.\s?a|\bbijv|\bo\.a"
    r"|\bc\.-à-d|\benv|\bp\.\s?ej|\bvb|\börn|\betc|\bapprox|\bFig|\bNr|\bNo|(?<![\w/])[a-z])\.$",
    re.IGNORECASE,
)
K1, B = 1.2, 0.75  # BM25's usual saturation and length normalisation, at sentence level
NUMBER_BOOST: Final = 1.5  # a quantity question: a sentence that states a number
SUBJECT_WEIGHT: Final = 0.2  # a query word that is one of the entry title's words
CHUNK_PRIOR: Final = 1.5  # a sentence of the paragraph retrieval ranked best
SHOWN: Final = 3  # sentences shown at most
KEEP_SHARE: Final = 0.5  # ... each scoring at least this share of the best one
MIN_WORDS: Final = 40  # fewer words than this: the best sentence's neighbours are added


@dataclass(frozen=True, slots=True)
class _Sentence:
    text: str
    chunk: int  # position of its paragraph in the entry
    position: int  # position in the entry
    terms: tuple[str, ...]


def split_sentences(text: str) -> list[str]:
    """The sentences of `text`: each line (paragraph or list item) split after . ! ? where a
    new sentence starts, abbreviations (et al., e.g., z. B., ...) and decimals kept whole."""
    out: list[str] = []
    for line in text.splitlines():
        merged: list[str] = []
        for piece in _END.split(line.strip()):
            if merged and _ABBREVIATION.search(merged[-1]):
                merged[-1] = f"{merged[-1]} {piece}"
            elif piece:
                merged.append(piece)
        out += merged
    return out


def answer_excerpt(
    query: str,
    lang: str,
    entry: Sequence[Chunk],
    best_chunk: int,
    terms: Callable[[str, bool], list[str]],
    idf: Callable[[str], float],
) -> str:
    """The sentences of `entry` (its chunks in one language, in order) that best answer `query`,
    in the entry's order: adjacent ones joined, a gap marked "…"; "" when no sentence shares a
    word with the query. `best_chunk` is the `n` of the chunk retrieval ranked best; `terms(text,
    is_query)` tokenises as the language's index does and `idf` weighs a term."""
    wanted = Counter(terms(query, True))
    if not wanted:
        return ""
    sentences = _sentences(entry, lambda text: terms(text, False))
    if not sentences:
        return ""
    # The entry's subject (its title's words) says which entry, not which sentence: weighed less.
    subject = set(terms(entry[0].title, False))
    weight = {t: idf(t) * (SUBJECT_WEIGHT if t in subject else 1.0) for t in wanted}
    average = sum(len(s.terms) for s in sentences) / len(sentences)
    quantity = lang in _QUANTITY and bool(_QUANTITY[lang].search(query))
    scores = [_score(s, weight, average, quantity, best_chunk) for s in sentences]
    best = max(range(len(sentences)), key=lambda i: (scores[i], -i))
    if scores[best] <= 0:
        return ""
    ranked = sorted(range(len(sentences)), key=lambda i: (-scores[i], i))
    chosen = {i for i in ranked[:SHOWN] if scores[i] >= KEEP_SHARE * scores[best]}
    # Too short to stand alone: the best sentence's neighbours in its paragraph, next first.
    for near in (best + 1, best - 1):
        words = sum(len(sentences[i].text.split()) for i in chosen)
        beside = 0 <= near < len(sentences) and sentences[near].chunk == sentences[best].chunk
        if words < MIN_WORDS and beside:
            chosen.add(near)
    return _join([sentences[i] for i in sorted(chosen)])


def _sentences(entry: Sequence[Chunk], tokenize: Callable[[str], list[str]]) -> list[_Sentence]:
    out: list[_Sentence] = []
    for chunk in sorted(entry, key=lambda c: c.n):
        for text in split_sentences(chunk.text):
            out.append(_Sentence(text, chunk.n, len(out), tuple(tokenize(text))))
    return out


def _score(
    s: _Sentence,
    weight: dict[str, float],
    average: float,
    quantity: bool,
    best_chunk: int,
) -> float:
    """BM25 of one sentence for the query's terms, with the number and paragraph preferences."""
    counts = Counter(s.terms)
    norm = K1 * (1 - B + B * len(s.terms) / max(average, 1.0))
    score = sum(w * counts[t] * (K1 + 1) / (counts[t] + norm) for t, w in weight.items())
    if quantity and _NUMBER.search(s.text):
        score *= NUMBER_BOOST
    if s.chunk == best_chunk:
        score *= CHUNK_PRIOR
    return score


def _join(sentences: Sequence[_Sentence]) -> str:
    parts: list[str] = []
    for i, s in enumerate(sentences):
        if i and s.position != sentences[i - 1].position + 1:
            parts.append("…")
        parts.append(s.text)
    return " ".join(parts)


def bm25_idf(documents: int, frequency: int) -> float:
    """BM25's idf of a term found in `frequency` of `documents` documents (never negative)."""
    return math.log(1 + (documents - frequency + 0.5) / (frequency + 0.5))


def with_excerpts(
    passages: Sequence[Passage], query: str, chunks: Sequence[Chunk], lexicon: LanguageBM25
) -> list[Passage]:
    """Each passage with the excerpt of its entry (in the passage's language) that answers
    `query` (`Passage.answer`; "" where no sentence shares a word with it)."""
    wanted = {(p.topic, p.source, p.lang) for p in passages}
    entries: dict[tuple[str | None, str, str], list[Chunk]] = {}
    for chunk in chunks:
        key = (chunk.topic, chunk.source, chunk.lang)
        if key in wanted:
            entries.setdefault(key, []).append(chunk)
    return [_with_excerpt(p, query, entries.get((p.topic, p.source, p.lang), []), lexicon)
            for p in passages]  # fmt: skip


def _with_excerpt(p: Passage, query: str, entry: list[Chunk], lexicon: LanguageBM25) -> Passage:
    def terms(text: str, is_query: bool) -> list[str]:
        return lexicon.terms(text, p.lang, is_query)

    def idf(term: str) -> float:
        return lexicon.idf(p.lang, term)

    n = next((c.n for c in entry if c.id == p.chunk_id), -1)
    return p.model_copy(update={"answer": answer_excerpt(query, p.lang, entry, n, terms, idf)})
