"""Chunking of entries and of arbitrary text files."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from knowledge.documents.chunking import (
    chunk_entry,
    chunk_text_file,
    is_plain_heading,
    make_chunk,
    pack_paragraphs,
    split_sections,
)
from knowledge.documents.entries import Entry

WORD = "word "


def _guide(body: str) -> Entry:
    return Entry(
        topic="specs/vram", lang="en", title="VRAM", kind="guide", body=body, source="s.md"
    )


def test_faq_is_one_chunk_with_question_phrasings_and_answer() -> None:
    entry = Entry(
        topic="faq/training-spot",
        lang="en",
        title="Are spot instances safe?",
        kind="faq",
        questions=("Can I use spot?", "Is preemptible fine?", "Spot for training?"),
        body="Yes, with checkpoints.\n\nResume cleanly.",
        source="s.md",
    )
    [chunk] = chunk_entry(entry)
    assert chunk.id == "faq/training-spot#en#0", "stable id topic#lang#n"
    assert chunk.text == "Yes, with checkpoints.\n\nResume cleanly.", "shown text is the answer"
    assert chunk.title == "Are spot instances safe?", "title is the question"
    assert chunk.index_text == (
        "Are spot instances safe?\nCan I use spot?\nIs preemptible fine?\nSpot for training?\n\n"
        "Yes, with checkpoints.\n\nResume cleanly."
    ), "indexed text: question, phrasings, answer"


def test_guide_splits_at_paragraphs_with_title_prefixed() -> None:
    paragraphs = [WORD * 70, WORD * 40, WORD * 90]
    chunks = chunk_entry(_guide("\n\n".join(p.strip() for p in paragraphs)), max_words=120)
    assert [c.id for c in chunks] == ["specs/vram#en#0", "specs/vram#en#1"], "two chunks"
    assert [len(c.text.split()) for c in chunks] == [110, 90], "70+40 packed, 90 alone"
    assert all(c.index_text == f"VRAM\n\n{c.text}" for c in chunks), "title prefixed"


def test_chunk_hash_changes_with_content_only() -> None:
    one = chunk_entry(_guide("Alpha."))[0]
    again = chunk_entry(_guide("Alpha."))[0]
    other = chunk_entry(_guide("Beta."))[0]
    assert one.content_hash == again.content_hash, "same content, same hash"
    assert one.content_hash != other.content_hash, "changed text, changed hash"


def test_markdown_heading_stays_with_the_next_paragraph() -> None:
    parts = pack_paragraphs([WORD * 100, "## Next part", WORD * 100], max_words=120)
    assert parts == [(WORD * 100), "## Next part\n\n" + WORD * 100], "heading not orphaned"


@given(st.lists(st.integers(min_value=1, max_value=200), min_size=1, max_size=12))
def test_packing_keeps_every_paragraph_whole_and_in_order(sizes: list[int]) -> None:
    paragraphs = [" ".join(f"p{i}w{j}" for j in range(n)) for i, n in enumerate(sizes)]
    parts = pack_paragraphs(paragraphs, max_words=120)
    assert "\n\n".join(parts) == "\n\n".join(paragraphs), "nothing lost, reordered or cut"
    for part in parts:
        assert len(part.split()) <= 120 or "\n\n" not in part, "only a lone paragraph may exceed"


def test_plain_headings_are_short_lines_without_sentence_end() -> None:
    assert is_plain_heading("Single-GPU, multi-GPU and multi-node training")
    assert is_plain_heading("How much GPU memory do I need to train a model?")
    assert not is_plain_heading("Not every job needs a cluster. Match the scale:")
    assert not is_plain_heading("• VRAM is the hard limit")
    assert not is_plain_heading("A sentence that ends like one.")


def test_split_sections_groups_paragraphs_under_headings() -> None:
    text = "Title\n\nFirst heading\n\nPara one.\n\nPara two.\n\nA question?\n\nThe answer.\n"
    title, sections = split_sections(text, markdown=False)
    assert title == "Title", "first heading is the document title"
    assert sections == [
        ("First heading", ["Para one.", "Para two."]),
        ("A question?", ["The answer."]),
    ], "empty title section dropped; paragraphs under their heading"


def test_text_file_chunks_have_detected_language_and_no_topic(tmp_path: Path) -> None:
    path = tmp_path / "notes.md"
    path.write_text(
        "---\ntitle: x\n---\n# Notes\n\nIntro line.\n\n## Spot\n\nUse checkpoints.\n",
        encoding="utf-8",
    )
    chunks = chunk_text_file(path, "src/notes.md", detect=lambda text: "en")
    assert [(c.id, c.title, c.text, c.topic, c.kind) for c in chunks] == [
        ("src/notes.md#en#0", "Notes", "Intro line.", None, "section"),
        ("src/notes.md#en#1", "Spot", "Use checkpoints.", None, "section"),
    ], "front matter dropped, one chunk per Markdown section"


def test_make_chunk_hash_covers_every_field() -> None:
    fields = dict(
        id="a#en#0",
        topic="a/b",
        lang="en",
        kind="guide",
        title="T",
        text="x",
        index_text="T x",
        source="s",
        n=0,
    )
    base = make_chunk(**fields).content_hash
    for key, value in [("title", "U"), ("lang", "nl"), ("source", "t"), ("index_text", "y")]:
        assert make_chunk(**{**fields, key: value}).content_hash != base, f"{key} is hashed"
