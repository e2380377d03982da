"""BM25 with per-language Snowball stemming."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from knowledge.documents.chunking import make_chunk
from knowledge.retrieval import lexical
from knowledge.retrieval.compounds import COMPOUND_LINKS, CompoundSplitter
from knowledge.retrieval.lexical import LanguageBM25, vote_language
from knowledge.retrieval.spelling import Speller
from knowledge.retrieval.text import tokenize


def _chunk(n: int, lang: str, text: str, terms: str = ""):
    return make_chunk(
        terms=terms,
        id=f"t/x{n}#{lang}#0",
        topic=f"t/x{n}",
        lang=lang,
        kind="guide",
        title="",
        text=text,
        index_text=text,
        source="s",
        n=0,
    )


@pytest.mark.parametrize(
    ("text", "lang", "tokens"),
    [
        ("Training the models", "en", ["train", "model"]),
        ("Het trainen van modellen", "nl", ["train", "model"]),
        ("Les modèles entraînés", "fr", ["model", "entraîn"]),
        ("Modellerin eğitimi için", "tr", ["model", "eğit"]),
        ("Das Trainieren der Modelle", "de", ["traini", "modell"]),
        ("Entrenando los modelos", "es", ["entren", "model"]),
        ("VRAM needs, VRAM", "xx", ["vram", "needs", "vram"]),
    ],
)
def test_tokenize_removes_stop_words_and_stems_per_language(
    text: str, lang: str, tokens: list[str]
) -> None:
    assert tokenize(text, lang) == tokens, f"Snowball {lang} stems, stop words gone"


def test_query_is_scored_against_its_own_language_only() -> None:
    chunks = [
        _chunk(0, "en", "spot instances can be interrupted"),
        _chunk(1, "nl", "spot instanties kunnen worden onderbroken"),
        _chunk(2, "en", "memory bandwidth feeds the cores"),
    ]
    scores = LanguageBM25(chunks).scores("interrupted spot instance", "en")
    assert scores[0] > 0 and scores[1] == 0 and scores[2] == 0, "only English chunks scored"


def test_stemming_matches_inflected_forms() -> None:
    chunks = [_chunk(0, "nl", "onderbreekbare instanties"), _chunk(1, "nl", "geheugen")]
    scores = LanguageBM25(chunks).scores("instantie", "nl")
    assert scores[0] > 0 and scores[1] == 0, "instantie matches instanties via the Dutch stemmer"


def test_unsupported_language_is_scored_against_english_only() -> None:
    chunks = [
        _chunk(0, "en", "spot checkpoint"),
        _chunk(1, "es", "spot instancias"),
        _chunk(2, "es", "memoria"),
    ]
    scores = LanguageBM25(chunks).scores("spot", None)
    assert scores[0] > 0 and scores[1] == 0 and scores[2] == 0, "English is the fallback index"


def test_unsupported_language_without_english_is_scored_everywhere_normalised() -> None:
    chunks = [
        _chunk(0, "nl", "spot checkpoint"),
        _chunk(1, "es", "spot instancias"),
        _chunk(2, "es", "memoria"),
    ]
    scores = LanguageBM25(chunks).scores("spot", None)
    assert np.allclose(scores, [1.0, 1.0, 0.0]), "each language's best score becomes 1"


SPLITTER = CompoundSplitter(
    Counter(
        {"kaart": 9, "kaarten": 5, "consumenten": 3, "training": 8, "geheugen": 7, "bedarf": 2}
    ),
    COMPOUND_LINKS["nl"],
)


@pytest.mark.parametrize(
    ("word", "parts"),
    [
        ("consumentenkaarten", ["consumenten", "kaarten"]),
        ("trainingsgeheugen", ["training", "geheugen"]),  # linking -s-
        ("gamekaart", ["kaart"]),  # unknown word: its known head only
        ("kaart", []),  # a known word that has no better split
        ("tool", []),
        ("geheugenbedarfkaart", ["geheugen", "bedarf", "kaart"]),  # three parts
    ],
)
def test_compound_parts_are_known_words(word: str, parts: list[str]) -> None:
    assert SPLITTER.parts(word) == parts, f"split of {word!r}"


def test_frequent_whole_word_is_not_split() -> None:
    splitter = CompoundSplitter(Counter({"kaarten": 50, "kaart": 2, "en": 2}), ("",))
    assert splitter.parts("kaarten") == [], "whole word more frequent than its parts"


def test_dutch_compound_in_query_meets_compound_in_passage() -> None:
    chunks = [
        _chunk(0, "nl", "consumentenkaarten met GDDR voor kleine modellen; een kaart"),
        _chunk(1, "nl", "datacenter met HBM-geheugen"),
    ]
    scores = LanguageBM25(chunks).scores("gamekaart", "nl")
    assert scores[0] > 0 and scores[1] == 0, "gamekaart -> kaart matches consumentenkaarten"


def test_compounds_are_split_for_dutch_and_german_only() -> None:
    splitter = CompoundSplitter(Counter({"spot": 3, "preis": 3}), ("",))
    assert tokenize("Spotpreis", "de", splitter.parts) == ["spotpreis", "spot", "preis"]
    assert set(COMPOUND_LINKS) == {"nl", "de"}, "only Dutch and German write compounds as one word"


@given(st.text(alphabet="abcdeklnorst", min_size=0, max_size=14))
def test_compound_parts_are_always_vocabulary_words(word: str) -> None:
    parts = SPLITTER.parts(word)
    assert all(part in SPLITTER.counts for part in parts), "every part is a known word"
    assert all(len(part) >= 3 for part in parts), "parts have at least MIN_PART letters"
    assert sum(len(p) for p in parts) <= len(word), "parts never add letters"


def test_entry_terms_are_keywords_of_their_chunk() -> None:
    chunks = [
        _chunk(0, "en", "interruptible capacity is cheaper", terms="spot\npreemptible"),
        _chunk(1, "en", "memory bandwidth feeds the cores"),
    ]
    scores = LanguageBM25(chunks).scores("preemptible vms", "en")
    assert scores[0] > 0 and scores[1] == 0


def test_query_without_turkish_letters_meets_the_entry_words() -> None:
    chunks = [
        _chunk(0, "tr", "eğitim sırasında belleği ağırlıklar doldurur"),
        _chunk(1, "tr", "spot makineler daha ucuzdur"),
    ]
    bm25 = LanguageBM25(chunks)
    scores = bm25.scores("egitim sirasinda bellegi", "tr")
    assert scores[0] > 0 and scores[1] == 0
    assert np.allclose(scores, bm25.scores("eğitim sırasında belleği", "tr"), rtol=1e-5)


def test_words_of_another_language_are_not_respelled_as_english() -> None:
    chunks = [_chunk(0, "en", "memory needed per model"), _chunk(1, "en", "spot capacity")]
    bm25 = LanguageBM25(chunks)
    assert bm25.scores("memoria necessaria", "it").max() == 0, "no typo reading across languages"
    assert bm25.scores("memroy needed", "en")[0] > 0


def test_a_query_asked_again_is_scored_once_and_equal(monkeypatch: pytest.MonkeyPatch) -> None:
    """The caveat searches repeat their query every turn: it is tokenised and scored once,
    the kept scores cannot be changed, and the oldest query is dropped past the limit."""
    chunks = [_chunk(0, "en", "spot capacity is cheaper"), _chunk(1, "en", "memory bandwidth")]
    monkeypatch.setattr(lexical, "CACHED_QUERIES", 2)
    bm25 = LanguageBM25(chunks)
    scored: list[str] = []
    real = bm25._score_into

    def counted(out: np.ndarray, query: str, *args: object, **kwargs: object) -> None:
        scored.append(query)
        real(out, query, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(bm25, "_score_into", counted)
    first = bm25.scores("spot capacity", "en")
    again = bm25.scores("spot capacity", "en")
    assert scored == ["spot capacity"] and np.array_equal(first, again) and first[0] > 0
    with pytest.raises(ValueError):
        again[0] = 0.0
    assert bm25.scores("spot capacity", "nl") is not first, "the language is part of the key"
    bm25.scores("memory", "en")
    bm25.scores("spot capacity", "en")
    assert scored == ["spot capacity", "spot capacity", "memory", "spot capacity"]


def _speller(*words: str) -> Speller:
    return Speller(Counter(words))


def test_vote_language_counts_only_telling_words() -> None:
    spellers = {
        "en": _speller("storage", "gpu", "nvlink", "the"),
        "fr": _speller("stockage", "gpu", "nvlink", "le"),
        "nl": _speller("opslag", "gpu", "nvlink", "de"),
    }
    assert vote_language(["stockage"], spellers) == "fr"
    assert vote_language(["gpu", "nvlink"], spellers) is None, "known everywhere: tells nothing"
    assert vote_language(["stockage", "opslag"], spellers) is None, "a tie decides nothing"
    assert vote_language(["zzz"], spellers) is None


def test_a_short_query_is_read_in_the_language_whose_entries_use_its_words() -> None:
    chunks = [
        _chunk(0, "en", "persistent storage keeps data"),
        _chunk(1, "fr", "le stockage persistant garde les données"),
        _chunk(2, "nl", "persistente opslag bewaart data"),
    ]
    bm25 = LanguageBM25(chunks)
    assert bm25.language_of("stockage") == "fr"
    assert bm25.language_of("donnees stockage") == "fr", "read without accents"
    assert bm25.language_of("opslag 80 gb") == "nl", "numbers carry no language"
    assert bm25.language_of("le stockage persistant garde les données ici") is None, "not short"
