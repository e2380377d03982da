"""Compound splitting for Dutch and German BM25 tokens, from the knowledge base's own words.

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

import math
from collections import Counter
from collections.abc import Iterable, Sequence

from knowledge.retrieval.text import TOKEN, stopwords

# Linking elements allowed between compound parts (Dutch "-s-", "-en-", "-e-"; German "-s-",
# "-es-", "-n-", "-en-", "-e-", "-er-"); only these languages are split.
COMPOUND_LINKS: dict[str, tuple[str, ...]] = {
    "nl": ("", "s", "en", "e"),
    "de": ("", "s", "es", "n", "en", "e", "er"),
}
MIN_PART = 3  # letters in a compound part
MIN_HEAD = 4  # letters in a head taken alone from an unknown word
MAX_PARTS = 3


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
        stop = stopwords(lang)
        counts: Counter[str] = Counter()
        for text in texts:
            counts.update(w for w in TOKEN.findall(text.lower()) if w not in stop)
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
