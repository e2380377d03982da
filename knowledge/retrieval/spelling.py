"""Query words the knowledge base never uses, read as a word its entries do use.

People type without accents or Turkish letters ("memoire", "bellegi", "uberlegen") and with
typos ("memroy", "checkpint"). The stemmer cannot help: it stems "bellegi" differently from the
entries' "belleği". So, before stemming, a query word that no entry of its language contains is
read as
1. the entries' word with the same letters once accents are removed and Turkish ı/İ read as i
   (`jobs.fold`), or once German umlauts and ß are written out ("fuer", "groesse", "gross"),
   the most frequent one when several fold alike; else
2. for words of at least `MIN_TYPO_LETTERS` letters, an entries' word one edit away (a letter
   dropped, added, changed, or two neighbours swapped: Damerau 1964), found through one-letter
   deletions as in SymSpell (Garbe 2012); the most frequent candidate wins, ties alphabetically.
A word with no such reading is left as it is.
"""

from __future__ import annotations

from collections import Counter

from knowledge.retrieval.jobs import fold

MIN_TYPO_LETTERS = 5
_WRITTEN_OUT = str.maketrans({"ä": "ae", "ö": "oe", "ü": "ue", "ß": "ss"})


def _deletes(word: str) -> set[str]:
    return {word[:i] + word[i + 1 :] for i in range(len(word))}


def one_edit(a: str, b: str) -> bool:
    """Whether `a` and `b` differ by exactly one insertion, deletion, substitution or swap."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
        if len(diff) == 1:
            return True
        i, j = diff[0], diff[-1]
        return len(diff) == 2 and j == i + 1 and a[i] == b[j] and a[j] == b[i]
    short, long = sorted((a, b), key=len)
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))


class Speller:
    """Reads unknown query words as known words of one language (see the module docstring)."""

    def __init__(self, counts: Counter[str]) -> None:
        self.counts = counts
        self._folded: dict[str, str] = {}
        self._typo_keys: dict[str, set[str]] | None = None
        for word in sorted(counts, key=lambda w: (-counts[w], w)):
            self._folded.setdefault(fold(word), word)
            self._folded.setdefault(word.translate(_WRITTEN_OUT), word)

    def _keys(self) -> dict[str, set[str]]:
        """Deletion keys -> folded vocabulary words, built on the first typo lookup."""
        if self._typo_keys is None:
            keys: dict[str, set[str]] = {}
            for folded in self._folded:
                if len(folded) >= MIN_TYPO_LETTERS - 1 and folded.isalpha():
                    for key in {folded, *_deletes(folded)}:
                        keys.setdefault(key, set()).add(folded)
            self._typo_keys = keys
        return self._typo_keys

    def knows(self, word: str) -> bool:
        """Whether the entries use `word`, as written or as it reads (`read`)."""
        return word in self.counts or self.read(word) in self.counts

    def read(self, word: str) -> str:
        """`word` when the entries use it, else its accent or one-typo reading, else `word`."""
        if word in self.counts or not word.isalpha():
            return word
        folded = fold(word)
        if folded in self._folded:
            return self._folded[folded]
        if len(folded) < MIN_TYPO_LETTERS:
            return word
        candidates: set[str] = set()
        keys = self._keys()
        for key in {folded, *_deletes(folded)}:
            candidates |= keys.get(key, set())
        valid = [self._folded[c] for c in candidates if one_edit(folded, c)]
        if not valid:
            return word
        return min(valid, key=lambda w: (-self.counts[w], w))
