"""KnowledgeBase: search behaviour, automatic rebuilds, extra sources, stats, input errors."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

import knowledge
from knowledge.base import KnowledgeBase, builtin_chunks
from knowledge.config import KnowledgeConfig
from knowledge.index.store import MANIFEST
from knowledge.retrieval.fusion import FusionParams
from tests.fakes.embeddings import HashEmbeddings
from tests.knowledge.conftest import write_entry
from tools.errors import InvalidInputError


def _folder(base: KnowledgeBase) -> Path:
    folder = base.store.current_folder()
    assert folder is not None, "an index was published"
    return folder


@pytest.fixture
def kb(kb_config: KnowledgeConfig, mini_docs: Path) -> Iterator[KnowledgeBase]:
    base = KnowledgeBase(kb_config, docs_dir=mini_docs, embeddings=HashEmbeddings())
    yield base
    base.close()


def test_dutch_query_gets_the_dutch_passage(kb: KnowledgeBase) -> None:
    [top, *_] = kb.search("Kan ik op spot trainen?", k=3)
    assert (top.topic, top.lang, top.lang_fallback) == ("faq/training-spot", "nl", False)
    assert top.title == "Zijn spot-instanties veilig voor training?", "the Dutch question"
    assert top.text.startswith("Ja, als je vaak een checkpoint schrijft"), "the Dutch answer"
    assert top.source == "docs/nl/faq__training-spot.md", "label/lang/file"


def test_topic_missing_in_the_query_language_falls_back_flagged(kb: KnowledgeBase) -> None:
    passages = kb.search("NVLink InfiniBand gradient", lang="nl", k=3)
    hit = next(p for p in passages if p.topic == "specs/interconnect")
    assert (hit.lang, hit.lang_fallback, hit.query_lang) == ("en", True, "nl"), "en, flagged"


def test_one_passage_per_topic_best_first(kb: KnowledgeBase) -> None:
    passages = kb.search("VRAM HBM memory cards", k=5)
    topics = [p.topic for p in passages]
    assert topics[0] == "specs/vram", "the VRAM guide wins"
    assert len(topics) == len(set(topics)) == 3, "three topics in the mini KB, once each"
    assert [p.score for p in passages] == sorted((p.score for p in passages), reverse=True)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"query": "  "}, r"query: got '  '; valid: a non-empty question"),
        ({"query": "vram", "k": 0}, r"k: got 0; valid: an integer from 1 to 50"),
        ({"query": "vram", "lang": "Dutch"}, r"lang: got 'Dutch'; valid: an ISO 639-1 code"),
        ({"query": "vram", "job": "sft"}, r"job: got 'sft'; valid: one of pretrain, full, lora"),
    ],
)
def test_bad_search_input_says_what_is_valid(kb: KnowledgeBase, kwargs: dict, match: str) -> None:
    with pytest.raises(InvalidInputError, match=match):
        kb.search(**kwargs)


def test_content_change_rebuilds_automatically(
    kb: KnowledgeBase, mini_docs: Path, kb_config: KnowledgeConfig, caplog: pytest.LogCaptureFixture
) -> None:
    kb.search("vram")
    kb.close()
    write_entry(mini_docs, "specs/precision", "en", "BF16 precision", "BF16 keeps the FP32 range.")
    with caplog.at_level(logging.INFO, logger="knowledge"):
        fresh = KnowledgeBase(kb_config, docs_dir=mini_docs, embeddings=HashEmbeddings())
        top = fresh.search("BF16 range", k=1)[0]
    assert "out of date (content changed); rebuilding" in caplog.text, "log says why"
    assert top.topic == "specs/precision", "the new entry is searchable"
    fresh.close()


def test_embedder_change_rebuilds_automatically(
    kb: KnowledgeBase, mini_docs: Path, kb_config: KnowledgeConfig, caplog: pytest.LogCaptureFixture
) -> None:
    kb.search("vram")
    kb.close()
    with caplog.at_level(logging.INFO, logger="knowledge"):
        other = KnowledgeBase(kb_config, docs_dir=mini_docs, embeddings=HashEmbeddings(dim=32))
        other.search("vram")
    assert "embedder changed: hash-64 -> hash-32" in caplog.text, "log names both embedders"
    assert other.stats().embedder_id == "hash-32", "index now keyed by the new embedder"
    other.close()


def test_unchanged_index_is_reused(
    kb: KnowledgeBase, mini_docs: Path, kb_config: KnowledgeConfig
) -> None:
    kb.search("vram")
    built_at = kb.stats().built_at
    folder = kb.store.current_folder()
    kb.close()
    again = KnowledgeBase(kb_config, docs_dir=mini_docs, embeddings=HashEmbeddings())
    again.search("vram")
    assert again.store.current_folder() == folder and again.stats().built_at == built_at
    again.close()


def test_corrupt_index_is_rebuilt_with_a_log_line(
    kb: KnowledgeBase, mini_docs: Path, kb_config: KnowledgeConfig, caplog: pytest.LogCaptureFixture
) -> None:
    kb.search("vram")
    kb.close()
    (_folder(kb) / MANIFEST).write_text("{half-written")
    with caplog.at_level(logging.WARNING, logger="knowledge"):
        fresh = KnowledgeBase(kb_config, docs_dir=mini_docs, embeddings=HashEmbeddings())
        assert fresh.stats().status == "corrupt", "stats reports it without building"
        top = fresh.search("spot training", k=1)[0]
    assert "is corrupt (manifest" in caplog.text and "rebuilding" in caplog.text
    assert top.topic == "faq/training-spot", "search works on the rebuilt index"
    fresh.close()


def test_stats_tracks_missing_ready_and_stale(kb: KnowledgeBase, mini_docs: Path) -> None:
    missing = kb.stats()
    assert (missing.status, missing.chunk_count) == ("missing", 0), "nothing built yet"
    ready = kb.build()
    assert ready.status == "ready" and ready.topic_count == 3, "three topics"
    assert ready.chunks_per_language == {"en": 3, "nl": 2}, "short guides are one chunk each"
    kb.close()
    write_entry(mini_docs, "specs/precision", "en", "Precision", "BF16.")
    stale = kb.stats()
    assert (stale.status, stale.detail) == ("stale", "content changed"), "edit noticed"


def test_extra_source_chunks_are_searchable_and_remembered(
    kb_config: KnowledgeConfig, mini_docs: Path, tmp_path: Path
) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "egress.txt").write_text(
        "Moving data out\n\nEgress fees apply when checkpoints leave the cloud region.\n",
        encoding="utf-8",
    )
    first = KnowledgeBase(
        kb_config, docs_dir=mini_docs, extra_sources=[notes], embeddings=HashEmbeddings()
    )
    first.build()
    first.close()
    later = KnowledgeBase(kb_config, docs_dir=mini_docs, embeddings=HashEmbeddings())
    top = later.search("egress fees for checkpoints leaving the region", k=1)[0]
    assert (top.topic, top.source, top.title) == (None, "notes/egress.txt", "Moving data out")
    assert top.lang == "en" and later.stats().extra_sources == [str(notes)], "remembered"
    later.close()


def test_missing_extra_source_is_an_input_error(kb_config: KnowledgeConfig, tmp_path: Path) -> None:
    base = KnowledgeBase(
        kb_config, docs_dir=None, extra_sources=[tmp_path / "nope"], embeddings=HashEmbeddings()
    )
    with pytest.raises(InvalidInputError, match=r"source: got '.*nope'; valid: an existing folder"):
        base.build()


def test_module_level_search_uses_one_cached_knowledge_base(
    kb_config: KnowledgeConfig, monkeypatch: pytest.MonkeyPatch, mini_docs: Path
) -> None:
    made: list[KnowledgeBase] = []

    def fake_base(config: KnowledgeConfig) -> KnowledgeBase:
        base = KnowledgeBase(config, docs_dir=mini_docs, embeddings=HashEmbeddings())
        made.append(base)
        return base

    monkeypatch.setattr("knowledge.base.KnowledgeBase", fake_base)
    monkeypatch.setattr(knowledge, "_BASES", {})
    first = knowledge.search("spot", k=1, config=kb_config)
    second = knowledge.search("VRAM", lang="nl", k=1, config=kb_config)
    assert len(made) == 1, "one KnowledgeBase per config"
    assert first[0].topic == "faq/training-spot" and second[0].lang == "nl"
    made[0].close()


def test_dense_over_the_query_language_only_ranks_that_language(
    kb_config: KnowledgeConfig, mini_docs: Path
) -> None:
    config = kb_config.model_copy(update={"retrieval": "dense"})
    fusion = FusionParams(weights={"dense": 0.0, "dense_lang": 1.0})
    base = KnowledgeBase(config, docs_dir=mini_docs, embeddings=HashEmbeddings(), fusion=fusion)
    passages = base.search("NVLink InfiniBand grafische kaart", lang="nl", k=5)
    assert sorted(p.topic or "" for p in passages) == ["faq/training-spot", "specs/vram"], (
        "only topics with a Dutch chunk are ranked; the English-only interconnect guide is not"
    )
    assert base.search("NVLink", lang="it", k=5) == [], "no Italian chunks: nothing to rank"
    base.close()


def test_rebuild_embeds_only_changed_texts(
    kb: KnowledgeBase, mini_docs: Path, kb_config: KnowledgeConfig
) -> None:
    kb.search("vram")
    kb.close()
    write_entry(mini_docs, "specs/precision", "en", "BF16 precision", "BF16 keeps the FP32 range.")
    counting = HashEmbeddings()
    fresh = KnowledgeBase(kb_config, docs_dir=mini_docs, embeddings=counting)
    fresh.search("BF16")
    assert counting.embedded == 1, "only the new guide's one chunk was embedded"
    fresh.close()


def test_builtin_chunks_are_what_a_default_knowledge_base_indexes(
    kb_config: KnowledgeConfig,
) -> None:
    chunks = builtin_chunks()
    base = KnowledgeBase(kb_config, embeddings=HashEmbeddings())
    assert base.load_chunks([]) == chunks, "the shipped seed vectors cover exactly these chunks"
    assert {c.lang for c in chunks} == {"de", "en", "es", "fr", "nl", "tr"}, "all six languages"


def test_the_job_picks_the_twin_entry_written_for_it(
    kb_config: KnowledgeConfig, mini_docs: Path
) -> None:
    write_entry(
        mini_docs,
        "faq/finetune-spot",
        "en",
        "Can I fine-tune on spot instances?",
        "Yes: adapter checkpoints are small, so save them often and resume.",
        ("Spot for a LoRA run?", "Is preemptible fine for fine-tuning?", "Spot for adapters?"),
    )
    base = KnowledgeBase(kb_config, docs_dir=mini_docs, embeddings=HashEmbeddings())
    try:
        query = "are spot instances safe?"
        plain = [p.topic for p in base.search(query, lang="en", k=3)]
        assert set(plain[:2]) == {"faq/training-spot", "faq/finetune-spot"}
        for job, first in [("lora", "faq/finetune-spot"), ("pretrain", "faq/training-spot")]:
            ranked = [p.topic for p in base.search(query, lang="en", k=3, job=job)]
            assert ranked[0] == first and sorted(ranked) == sorted(plain), f"{job}: {ranked}"
    finally:
        base.close()
