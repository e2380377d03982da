"""Unknown query words read as the entries' own words: accents, umlauts written out, one typo."""

from __future__ import annotations

from collections import Counter

import pytest

from knowledge.retrieval.spelling import Speller, one_edit

SPELLER = Speller(
    Counter(
        {
            "belleği": 3,
            "bellek": 5,
            "für": 4,
            "mémoire": 2,
            "memory": 9,
            "checkpoint": 6,
            "checkpoints": 2,
            "größe": 1,
            "nasıl": 2,
        }
    )
)


@pytest.mark.parametrize(
    ("word", "read"),
    [
        ("bellegi", "belleği"),  # Turkish letters left out
        ("nasil", "nasıl"),  # dotless i
        ("memoire", "mémoire"),  # accent left out
        ("fuer", "für"),  # umlaut written out
        ("groesse", "größe"),  # umlaut and ß written out
        ("memroy", "memory"),  # two letters swapped
        ("checkpint", "checkpoint"),  # a letter dropped
        ("memory", "memory"),  # known words stay
        ("vram", "vram"),  # short unknown words stay
        ("zzzzzzzz", "zzzzzzzz"),  # nothing near: stays
        ("4090", "4090"),  # numbers stay
    ],
)
def test_read(word: str, read: str) -> None:
    assert SPELLER.read(word) == read


def test_the_more_frequent_candidate_wins() -> None:
    assert Speller(Counter({"bellek": 1, "bellem": 4})).read("belleh") == "bellem"


@pytest.mark.parametrize(
    ("a", "b", "near"),
    [
        ("memory", "memroy", True),
        ("memory", "memor", True),
        ("memory", "memoery", True),
        ("memory", "mxmory", True),
        ("memory", "memory", False),
        ("memory", "mroemy", False),
        ("memory", "me", False),
    ],
)
def test_one_edit(a: str, b: str, near: bool) -> None:
    assert one_edit(a, b) is near
    assert one_edit(b, a) is near


def test_knows_a_word_as_written_or_as_it_reads() -> None:
    assert SPELLER.knows("bellek") and SPELLER.knows("bellegi") and SPELLER.knows("memroy")
    assert not SPELLER.knows("vram")
