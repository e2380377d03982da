"""Folding text for matching, and turning lexicon phrases into regular expressions
(`compile_phrases`, `compile_marked`: every lexicon and cue phrase list is compiled by them).

Everything is matched on folded text: case-folded, accents and other diacritics removed, and
Turkish dotless/dotted i merged ("İSTANBUL", "ıstanbul" and "istanbul" all become "istanbul"),
typographic apostrophes and dashes made plain, the multiplication sign written "x", and the
shorthand "w/" and "w/o" written "with" and "without".
Lexicon phrases are folded the same way, so they may be written with their accents.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence

# Applied after case folding and accent removal.
_PLAIN = str.maketrans({
    "ı": "i", "’": "'", "‘": "'", "ʼ": "'", "`": "'", "´": "'", "×": "x", "–": "-", "—": "-",
    "‐": "-", "‑": "-", "“": '"', "”": '"', "«": '"', "»": '"', "₺": "₺",
})  # fmt: skip
# The chat shorthand "w/" and "w/o" ("and w/ spot?", "w/o offload"), written out.
_WITH = re.compile(r"(?<![\w/])w/(o(?!\w))?(?=[\s\w]|$)")
# The character masked spans are overwritten with: neither a word character nor whitespace,
# so nothing matches across or inside a span already read.
MASK = "¦"


def fold(text: str) -> str:
    """`text` case-folded, without diacritics, with plain punctuation. Length may change
    (German "ß" folds to "ss")."""
    # Compatibility forms first ("𝐀" is "A"), then case, then decompose what folding composed.
    decomposed = unicodedata.normalize("NFKD", unicodedata.normalize("NFKD", text).casefold())
    bare = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    plain = bare.translate(_PLAIN).replace(MASK, " ")
    return _WITH.sub(lambda m: "without " if m.group(1) else "with ", plain)


def phrase_regex(phrase: str, glue_digits: bool = False) -> str:
    """A regex source matching `phrase` on folded text, as a whole word sequence.

    Spaces match any run of spaces or hyphens, hyphens match an optional space or hyphen
    ("fine-tuning", "fine tuning", "finetuning"), an apostrophe an optional apostrophe or space;
    a word ending in "*" matches any continuation of it ("parametre*": "parametreli").
    With `glue_digits`, the phrase may follow a digit directly (units: "24gb", "50tl", "48h").
    """
    return alternation([phrase], glue_digits)


def alternation(phrases: Iterable[str], glue_digits: bool = False) -> str:
    """One regex source matching any of `phrases` (see `phrase_regex`), the longest phrase
    winning at a place. Empty: a pattern that never matches."""
    return trie_regex([(p, None) for p in phrases], glue_digits)[0]


def compile_phrases(phrases: Iterable[str], glue_digits: bool = False) -> re.Pattern[str]:
    """`alternation(phrases)` compiled: the one way lexicon and cue phrases become a pattern."""
    return re.compile(alternation(phrases, glue_digits), re.UNICODE)


def compile_marked(
    pairs: Sequence[tuple[str, object]], glue_digits: bool = False
) -> tuple[re.Pattern[str], tuple[str, ...]]:
    """(phrase, value) pairs as one compiled pattern with a group per phrase, and the values in
    group order: `values[match.lastindex - 1]` is the value of the phrase matched."""
    source, values = trie_regex(pairs, glue_digits, mark=True)
    return re.compile(source, re.UNICODE), tuple(str(v) for v in values)


def trie_regex(
    phrases: Sequence[tuple[str, object]], glue_digits: bool = False, mark: bool = False
) -> tuple[str, list[object]]:
    """The phrases as one prefix-shared regex (Python's engine tries alternatives one by one,
    so sharing prefixes is what keeps hundreds of phrases fast). With `mark`, each phrase ends
    in an empty group; the second item lists the phrases' values in group order, so
    `values[match.lastindex - 1]` is the value of the phrase matched."""
    words, symbols = _Node(), _Node()
    for phrase, value in phrases:
        atoms = _atoms(phrase)
        if atoms:
            root = words if phrase.strip()[0].isalnum() else symbols
            root.add(atoms, value)
    values: list[object] = []
    head = r"(?<![^\W\d])" if glue_digits else r"(?<!\w)"
    parts = [head + words.emit(mark, values)] if words.children else []
    parts += [symbols.emit(mark, values)] if symbols.children else []
    return ("(?:" + "|".join(parts) + ")" if parts else "(?!)"), values


_WORD_END = r"(?!\w)"


class _Node:
    def __init__(self) -> None:
        self.children: dict[str, _Node] = {}
        self.end = False
        self.value: object = None

    def add(self, atoms: list[str], value: object) -> None:
        node = self
        for atom in atoms:
            node = node.children.setdefault(atom, _Node())
        if not node.end:  # the first value given for a phrase wins
            node.end, node.value = True, value

    def emit(self, mark: bool, values: list[object]) -> str:
        # A phrase's closing boundary is tried last, so the longest phrase wins.
        ordered = sorted(self.children.items(), key=lambda item: item[0] == _WORD_END)
        alts = [atom + child.emit(mark, values) for atom, child in ordered]
        if self.end:
            alts.append("()" if mark else "")
            if mark:
                values.append(self.value)
        if len(alts) == 1:
            return alts[0]
        return "(?:" + "|".join(alts) + ")"


def _atoms(phrase: str) -> list[str]:
    words = fold(phrase).split()
    atoms: list[str] = []
    for i, word in enumerate(words):
        if i:
            atoms.append(r"[\s\-]+")
        body = word.rstrip("*")
        atoms += [_char_regex(ch) for ch in body]
        if word.endswith("*"):
            atoms.append(r"\w*")
        elif i == len(words) - 1 and body and body[-1].isalnum():
            atoms.append(_WORD_END)
    return atoms if any(a for a in atoms) and words else []


def _char_regex(ch: str) -> str:
    if ch == "-":
        return r"[\s\-]?"
    if ch == "'":
        return r"['\s]?"
    return re.escape(ch)
