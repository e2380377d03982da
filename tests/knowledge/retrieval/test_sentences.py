"""The sentences of an entry that answer a question (knowledge/retrieval/sentences.py): splitting,
scoring and the excerpt, on a small entry with the real English analysis, and through the real
knowledge base's search."""

from __future__ import annotations

import pytest

from knowledge.documents.chunking import Chunk, make_chunk
from knowledge.retrieval.lexical import LanguageBM25
from knowledge.retrieval.sentences import answer_excerpt, bm25_idf, split_sentences

TITLE = "Gradient checkpointing: trading compute for activation memory"
PARAGRAPHS = [
    "Gradient checkpointing stores only the input of each layer. It recomputes the rest of the "
    "layer during the backward pass.",
    "Korthikanti et al. (2022) give the activation memory of one layer. Full recomputation "
    "leaves 2 bytes per element of each layer input.",
    "Since the forward pass is about a third of a training step, recomputing it costs roughly "
    "30% more compute. Raise the micro-batch to win some of it back.",
]


def _entry(lang: str = "en") -> list[Chunk]:
    return [
        make_chunk(id=f"memory/gc#{lang}#{n}", topic="memory/gc", lang=lang, kind="guide",
                   title=TITLE, text=text, index_text=f"{TITLE}\n{text}", source="gc.md", n=n)
        for n, text in enumerate(PARAGRAPHS)
    ]  # fmt: skip


def _excerpt(query: str, best_chunk: int = 0) -> str:
    entry = _entry()
    lexicon = LanguageBM25(entry)
    return answer_excerpt(
        query, "en", entry, best_chunk,
        lambda text, is_query: lexicon.terms(text, "en", is_query),
        lambda term: lexicon.idf("en", term),
    )  # fmt: skip


def test_sentences_split_after_their_end_but_not_after_abbreviations_or_in_decimals() -> None:
    text = "Korthikanti et al. (2022) measured it. QLoRA keeps 0.5 bytes, e.g. NF4. Next one!\n- A"
    assert split_sentences(text) == [
        "Korthikanti et al. (2022) measured it.",
        "QLoRA keeps 0.5 bytes, e.g. NF4.",
        "Next one!",
        "- A",
    ]
    assert split_sentences("z. B. so. Dann weiter.") == ["z. B. so.", "Dann weiter."]


def test_a_quantity_question_gets_the_sentence_with_the_figure_from_another_paragraph() -> None:
    """The best paragraph for retrieval is the first; the figure is in the third. The title's
    words (gradient checkpointing) say which entry, not which sentence."""
    shown = _excerpt("how much slower is a training step with gradient checkpointing?")
    assert "roughly 30% more compute" in shown
    assert shown.startswith("Since the forward pass is about a third of a training step")
    assert "Raise the micro-batch" in shown, "a short answer gets its next sentence as context"


def test_sentences_far_apart_are_shown_in_entry_order_with_a_gap_mark() -> None:
    shown = _excerpt(
        "which layer input does full recomputation keep, and what of the backward pass"
    )
    assert shown == (
        "Gradient checkpointing stores only the input of each layer. It recomputes the rest of "
        "the layer during the backward pass. … Full recomputation leaves 2 bytes per element of "
        "each layer input."
    )


def test_no_word_in_common_gives_no_excerpt() -> None:
    assert _excerpt("kite steady wind") == ""


def test_idf_is_bm25s_and_never_negative() -> None:
    assert bm25_idf(10, 0) == pytest.approx(3.0910, abs=1e-4)  # ln(1 + 10.5 / 0.5)
    assert bm25_idf(10, 10) == pytest.approx(0.0465, abs=1e-4)
    assert bm25_idf(1, 1) > 0


def test_the_knowledge_base_search_gives_each_passage_its_excerpt(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The real entries, BM25 only: the guidance entry on gradient checkpointing answers "how
    much slower" with its sentence on the extra compute, in each language asked."""
    from knowledge.base import KnowledgeBase
    from knowledge.config import KnowledgeConfig
    from tests.fakes.embeddings import HashEmbeddings

    config = KnowledgeConfig(data_dir=tmp_path, retrieval="bm25")
    kb = KnowledgeBase(config, embeddings=HashEmbeddings())
    kb.build()
    expected = {"en": "30%", "de": "30 %", "fr": "30 %", "es": "30 %", "nl": "30%", "tr": "%30"}
    questions = {
        "en": "how much slower does training get with gradient checkpointing?",
        "de": "wie viel langsamer wird das training mit gradient checkpointing?",
    }
    for lang, question in questions.items():
        found = {p.topic: p for p in kb.search(question, lang=lang, k=5)}
        entry = found["memory/gradient-checkpointing"]
        assert expected[lang] in entry.answer, (lang, entry.answer)
        assert entry.answer != entry.text


def test_coverage_is_the_idf_share_of_the_query_one_chunk_holds() -> None:
    entry = _entry()
    lexicon = LanguageBM25(entry)
    assert lexicon.coverage("gradient checkpointing backward pass", "en") == pytest.approx(1.0)
    assert lexicon.coverage("kite steady wind", "en") == 0.0
    half = lexicon.coverage("gradient checkpointing kite", "en")
    assert 0.0 < half < 1.0, "an unknown word weighs the most"
    assert lexicon.coverage("recomputation", "de") == lexicon.coverage("recomputation", "en")
