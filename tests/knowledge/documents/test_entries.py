"""Entry parsing and validation, and the coverage check of the real knowledge base."""

from __future__ import annotations

from pathlib import Path

import pytest

from knowledge.documents.entries import (
    BUILTIN_DOCS_DIR,
    LANGUAGES,
    PROJECT_TOPICS,
    EntryError,
    expected_kind,
    load_entries,
    missing_translations,
    parse_entry,
    shared_topic_ids,
)
from tests.knowledge.conftest import write_entry

GUIDE = """---
topic: specs/vram
lang: nl
title: "VRAM is de harde grens"
kind: guide
---
Eerste alinea.

Tweede alinea.
"""

FAQ = """---
topic: faq/training-spot
lang: en
title: "Are spot instances safe for training?"
kind: faq
questions:
  - "Can I train on spot?"
  - "Is preemptible capacity fine for training?"
  - "Spot or on-demand for a long run?"
---
Yes, with frequent checkpoints.
"""


def test_parse_guide_reads_every_field() -> None:
    entry = parse_entry(GUIDE, "docs/nl/specs__vram.md")
    assert (entry.topic, entry.lang, entry.kind) == ("specs/vram", "nl", "guide"), "front matter"
    assert entry.title == "VRAM is de harde grens", "quoted YAML title"
    assert entry.body == "Eerste alinea.\n\nTweede alinea.", "body stripped, paragraphs kept"
    assert entry.questions == (), "guides have no questions"
    assert entry.source == "docs/nl/specs__vram.md", "source is the path given"


def test_parse_faq_keeps_questions_in_order() -> None:
    entry = parse_entry(FAQ, "x.md")
    assert entry.questions == (
        "Can I train on spot?",
        "Is preemptible capacity fine for training?",
        "Spot or on-demand for a long run?",
    ), "all phrasings, in file order"


@pytest.mark.parametrize(
    ("text", "match"),
    [
        (
            "no front matter\n",
            r"x\.md: front matter: got 'no front matter\\n'; valid: a file starting",
        ),
        ("---\ntopic: [unclosed\n---\nbody\n", r"x\.md: front matter: .*valid: valid YAML"),
        ("---\n- a list\n---\nbody\n", r"front matter: got \['a list'\]; valid: a YAML mapping"),
        (GUIDE.replace("lang: nl", "lang: it"), r"x\.md: lang: got 'it'; valid: one of en, nl, fr"),
        (GUIDE.replace("kind: guide", "kind: howto"), r"kind: got 'howto'; valid: guide or faq"),
        (
            GUIDE.replace("kind: guide", "kind: faq"),
            r"kind: got 'faq'; valid: guide \(ids starting",
        ),
        (GUIDE.replace("specs/vram", "Specs VRAM"), r"topic: got 'Specs VRAM'; valid: an id like"),
        (
            GUIDE.replace('title: "VRAM is de harde grens"\n', ""),
            r"title: got .*; valid: Field required",
        ),
        (
            GUIDE.replace("kind: guide", "kind: guide\nauthor: me"),
            r"front matter keys: got \['author'\]",
        ),
        (
            GUIDE.split("---\nEerste")[0] + "---\n",
            r"body: got ''; valid: a non-empty Markdown body",
        ),
        (
            FAQ.replace('  - "Spot or on-demand for a long run?"\n', ""),
            r"questions: got 2; valid: 3-5",
        ),
        (
            GUIDE.replace("kind: guide", "kind: guide\nquestions: [a, b, c]"),
            r"questions: got 3; valid: no",
        ),
        (
            GUIDE.replace("kind: guide", 'kind: guide\nterms: [vram, " "]'),
            r"terms: got \['vram', ' '\]; valid: non-empty strings",
        ),
    ],
)
def test_malformed_entries_say_file_field_and_what_is_valid(text: str, match: str) -> None:
    with pytest.raises(EntryError, match=match):
        parse_entry(text, "x.md")


def test_expected_kind_follows_the_faq_prefix() -> None:
    assert expected_kind("faq/training-spot") == "faq", "faq/ ids are FAQs"
    assert expected_kind("specs/vram") == "guide", "every other id is a guide"


def test_load_entries_sorts_and_labels_sources(mini_docs: Path) -> None:
    entries = load_entries(mini_docs, label="kb")
    keys = [(e.topic, e.lang) for e in entries]
    assert keys == [
        ("faq/training-spot", "en"),
        ("faq/training-spot", "nl"),
        ("specs/interconnect", "en"),
        ("specs/vram", "en"),
        ("specs/vram", "nl"),
    ], "sorted by topic then language"
    assert entries[0].source == "kb/en/faq__training-spot.md", "label/lang/file"


def test_load_entries_rejects_a_file_in_the_wrong_language_folder(mini_docs: Path) -> None:
    path = write_entry(mini_docs, "specs/precision", "en", "Precision", "BF16 is stable.")
    path.rename(mini_docs / "nl" / path.name)
    with pytest.raises(EntryError, match=r"lang: got 'en'; valid: 'nl' \(the entry's folder\)"):
        load_entries(mini_docs)


def test_load_entries_rejects_a_file_named_after_another_topic(mini_docs: Path) -> None:
    path = write_entry(mini_docs, "specs/precision", "en", "Precision", "BF16 is stable.")
    path.rename(path.with_name("specs__bandwidth.md"))
    with pytest.raises(EntryError, match=r"topic: got 'specs/precision'; valid: the topic of"):
        load_entries(mini_docs)


def test_load_entries_rejects_an_unknown_language_folder(mini_docs: Path) -> None:
    write_entry(mini_docs, "specs/vram", "it", "VRAM", "Memoria video.")
    with pytest.raises(EntryError, match=r"language folder: got 'it'; valid: one of en, nl"):
        load_entries(mini_docs)


def test_missing_translations_lists_languages_per_topic(mini_docs: Path) -> None:
    gaps = missing_translations(load_entries(mini_docs), ["specs/vram", "specs/interconnect"])
    assert gaps == {
        "specs/interconnect": ["nl", "fr", "tr", "de", "es"],
        "specs/vram": ["fr", "tr", "de", "es"],
    }, "every missing language, in LANGUAGES order"


def test_shared_topics_file_parses(shared_dir: Path) -> None:
    topics = shared_topic_ids(shared_dir / "kb" / "topics.yaml")
    assert len(topics) == 36, "topics.yaml holds 36 ids"
    assert "specs/vram" in topics and "faq/finetune-vs-training-hardware" in topics


def test_every_builtin_entry_is_valid_and_every_topic_is_in_all_six_languages(
    shared_dir: Path,
) -> None:
    entries = load_entries(BUILTIN_DOCS_DIR)
    required = [*shared_topic_ids(shared_dir / "kb" / "topics.yaml"), *PROJECT_TOPICS]
    gaps = missing_translations(entries, required)
    assert gaps == {}, f"topics missing in some of {LANGUAGES}: {gaps}"
    unknown = sorted({e.topic for e in entries} - set(required))
    assert unknown == [], "entries with topic ids that neither topics.yaml nor the project define"


def test_terms_are_read_and_reach_every_chunk_but_not_the_embedded_text() -> None:
    from knowledge.documents.chunking import chunk_entry

    entry = parse_entry(
        GUIDE.replace("kind: guide", "kind: guide\nterms: [grafisch geheugen, OOM]"), "x.md"
    )
    assert entry.terms == ("grafisch geheugen", "OOM")
    chunks = chunk_entry(entry)
    assert all(c.terms == "grafisch geheugen\nOOM" for c in chunks)
    assert all("OOM" not in c.index_text for c in chunks)


def test_every_builtin_entry_carries_vocabulary_in_its_language() -> None:
    """Each entry lists at least five `terms`, and none repeats its own title verbatim."""
    for entry in load_entries():
        assert len(entry.terms) >= 5, f"{entry.source}: {len(entry.terms)} terms"
        assert len(set(entry.terms)) == len(entry.terms), f"{entry.source}: repeated terms"
        assert entry.title not in entry.terms, f"{entry.source}: the title is not a term"
