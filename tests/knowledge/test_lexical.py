"""BM25 with per-language Snowball stemming."""

from __future__ import annotations

import numpy as np
import pytest

from knowledge.chunking import make_chunk
from knowledge.lexical import LanguageBM25, tokenize


def _chunk(n: int, lang: str, text: str):
    return make_chunk(
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


def test_unsupported_language_is_scored_against_every_language_normalised() -> None:
    chunks = [
        _chunk(0, "en", "spot checkpoint"),
        _chunk(1, "es", "spot instancias"),
        _chunk(2, "es", "memoria"),
    ]
    scores = LanguageBM25(chunks).scores("spot", None)
    assert np.allclose(scores, [1.0, 1.0, 0.0]), "each language's best score becomes 1"
