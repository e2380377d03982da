"""The conversation's job (or the query's own words) decides between twin entries."""

from __future__ import annotations

import pytest

from knowledge.retrieval.jobs import (
    TWINS,
    fold,
    job_kind,
    prefer_twins,
    query_kind,
    train_word_kind,
)

GROUPS = [
    ("faq/training-memory", 0.05),
    ("specs/vram", 0.04),
    ("faq/finetune-memory", 0.03),
    ("memory/moe", 0.02),
]


def test_fold_removes_accents_and_reads_turkish_i() -> None:
    assert fold("Belleği İnce AYAR ıslak Größe mémoire") == "bellegi ince ayar islak große memoire"


@pytest.mark.parametrize(
    ("query", "kind"),
    [
        ("how much memory to fine-tune llama", "finetune"),
        ("QLoRA on one card?", "finetune"),
        ("ince ayar için kaç gpu", "finetune"),
        ("wie viel Speicher zum Feinabstimmen", "finetune"),
        ("pretraining a 1B model", "pretrain"),
        ("entrenar desde cero un modelo", "pretrain"),
        ("sıfırdan eğitim", "pretrain"),
        ("how much memory do I need", None),
        ("pre-training or fine-tuning, which needs more?", None),
    ],
)
def test_query_kind(query: str, kind: str | None) -> None:
    assert query_kind(query) == kind


def test_job_kind() -> None:
    assert job_kind("pretrain") == "pretrain"
    assert [job_kind(m) for m in ("full", "lora", "qlora")] == ["finetune"] * 3
    assert job_kind(None) is None


def test_a_finetuning_job_swaps_the_twins_and_moves_nothing_else() -> None:
    out = prefer_twins(GROUPS, "how much memory do I need?", "lora")
    assert [g for g, _ in out] == [
        "faq/finetune-memory",
        "specs/vram",
        "faq/training-memory",
        "memory/moe",
    ]
    assert [s for _, s in out] == [s for _, s in GROUPS]  # scores stay in rank order


def test_the_fitting_twin_already_first_or_no_job_leaves_the_order() -> None:
    assert prefer_twins(GROUPS, "how much memory do I need?", "pretrain") == GROUPS
    assert prefer_twins(GROUPS, "how much memory do I need?", None) == GROUPS


def test_the_query_naming_its_job_wins_over_the_conversation() -> None:
    out = prefer_twins(GROUPS, "memory to pretrain from scratch", "qlora")
    assert out == GROUPS
    out = prefer_twins(GROUPS, "memory to fine-tune it", "pretrain")
    assert out[0][0] == "faq/finetune-memory"


def test_a_twin_missing_from_the_ranking_changes_nothing() -> None:
    groups = [g for g in GROUPS if g[0] != "faq/finetune-memory"]
    assert prefer_twins(groups, "how much memory?", "full") == groups


def test_twins_are_real_topics_each_in_one_pair() -> None:
    from knowledge.documents.entries import load_entries

    topics = {e.topic for e in load_entries()}
    flat = [t for pair in TWINS for t in pair]
    assert set(flat) <= topics
    assert len(flat) == len(set(flat))


@pytest.mark.parametrize(
    ("query", "kind"),
    [
        ("do I need several GPUs to train?", "pretrain"),
        ("plusieurs GPU pour entraîner ?", "pretrain"),
        ("eğitim için kaç gpu", "pretrain"),
        ("entrenar un LoRA de SDXL", None),  # a fine-tuning word wins
        ("bij te trainen met een adapter", None),
        ("how much memory do I need", None),
    ],
)
def test_train_word_kind(query: str, kind: str | None) -> None:
    assert train_word_kind(query) == kind


def test_a_plain_train_word_decides_only_without_a_job() -> None:
    swapped = [("faq/finetune-memory", 0.05), ("faq/training-memory", 0.03)]
    assert prefer_twins(swapped, "memory to train it", None)[0][0] == "faq/training-memory"
    assert prefer_twins(swapped, "memory to train it", "lora") == swapped
