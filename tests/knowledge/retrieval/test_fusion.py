"""Reciprocal rank fusion, grouping by topic and the choice of the passage's language."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from knowledge.documents.chunking import Chunk, make_chunk
from knowledge.retrieval.fusion import FusionParams, fuse, group_ranks, pick_passages
from knowledge.retrieval.passages import Passage


def _chunk(topic: str | None, lang: str, n: int = 0) -> Chunk:
    chunk_id = f"{topic or 'file.txt'}#{lang}#{n}"
    return make_chunk(
        id=chunk_id,
        topic=topic,
        lang=lang,
        kind="guide",
        title=f"{topic} {lang}",
        text=f"text {chunk_id}",
        index_text="",
        source="s",
        n=n,
    )


CHUNKS = [
    _chunk("a/a", "en"),  # 0
    _chunk("a/a", "nl"),  # 1
    _chunk("b/b", "en"),  # 2
    _chunk("b/b", "en", 1),  # 3
    _chunk("c/c", "en"),  # 4  (only English)
    _chunk(None, "fr"),  # 5  (a file chunk: a group of its own)
]


def test_group_rank_is_the_rank_of_the_best_chunk_in_any_language() -> None:
    assert group_ranks([3, 1, 2, 0, 5], CHUNKS) == {"b/b": 1, "a/a": 2, "file.txt#fr#0": 3}


def test_rrf_scores_add_weight_over_k_plus_rank() -> None:
    params = FusionParams(rrf_k=60, weights={"dense": 1.0, "bm25": 0.5})
    groups, chunk_scores = fuse({"dense": [0, 2], "bm25": [2, 4]}, CHUNKS, params)
    assert groups == [
        ("b/b", pytest.approx(1 / 62 + 0.5 / 61)),
        ("a/a", pytest.approx(1 / 61)),
        ("c/c", pytest.approx(0.5 / 62)),
    ], "topic scores summed over systems, best first"
    assert chunk_scores[2] == pytest.approx(1 / 62 + 0.5 / 61), "chunk scores fuse the same way"


def test_zero_weight_system_is_ignored() -> None:
    params = FusionParams(weights={"dense": 1.0, "bm25": 0.0})
    groups, _ = fuse({"dense": [4], "bm25": [0]}, CHUNKS, params)
    assert [g for g, _ in groups] == ["c/c"], "bm25 contributes nothing at weight 0"


def test_passage_in_query_language_when_the_topic_has_it() -> None:
    groups, scores = fuse({"dense": [0, 1]}, CHUNKS, FusionParams())
    [passage] = pick_passages(groups, scores, CHUNKS, "nl", k=1)
    assert (passage.topic, passage.lang, passage.lang_fallback) == ("a/a", "nl", False)
    assert passage.chunk_id == "a/a#nl#0" and passage.query_lang == "nl"


def test_best_language_flagged_when_the_topic_lacks_the_query_language() -> None:
    groups, scores = fuse({"dense": [4]}, CHUNKS, FusionParams())
    [passage] = pick_passages(groups, scores, CHUNKS, "nl", k=1)
    assert (passage.topic, passage.lang, passage.lang_fallback) == ("c/c", "en", True)


def test_english_is_preferred_when_the_topic_lacks_the_query_language() -> None:
    groups, scores = fuse({"dense": [1, 0]}, CHUNKS, FusionParams())
    [passage] = pick_passages(groups, scores, CHUNKS, "it", k=1)
    assert (passage.topic, passage.lang, passage.lang_fallback) == ("a/a", "en", True), (
        "the Dutch chunk ranked higher, but an Italian reader gets the English one"
    )


def test_best_language_when_the_topic_has_neither_query_language_nor_english() -> None:
    groups, scores = fuse({"dense": [5]}, CHUNKS, FusionParams())
    [passage] = pick_passages(groups, scores, CHUNKS, "it", k=1)
    assert (passage.lang, passage.lang_fallback) == ("fr", True)


def test_best_ranked_chunk_of_a_topic_is_shown() -> None:
    groups, scores = fuse({"dense": [3, 2]}, CHUNKS, FusionParams())
    [passage] = pick_passages(groups, scores, CHUNKS, "en", k=1)
    assert passage.chunk_id == "b/b#en#1", "second paragraph ranked first, so it is shown"


def test_public_keys_are_exactly_the_seven_passage_keys() -> None:
    groups, scores = fuse({"dense": [0]}, CHUNKS, FusionParams())
    [passage] = pick_passages(groups, scores, CHUNKS, "en", k=1)
    assert list(passage.public()) == [
        "topic", "lang", "title", "text", "answer", "source", "score"
    ]  # fmt: skip
    assert isinstance(passage, Passage)


@given(
    st.lists(st.integers(0, len(CHUNKS) - 1), unique=True),
    st.lists(st.integers(0, len(CHUNKS) - 1), unique=True),
    st.sampled_from(["en", "nl", "fr", "it"]),
    st.integers(1, 8),
)
def test_passages_are_unique_topics_sorted_by_score(
    dense: list[int], bm25: list[int], lang: str, k: int
) -> None:
    groups, scores = fuse({"dense": dense, "bm25": bm25}, CHUNKS, FusionParams())
    passages = pick_passages(groups, scores, CHUNKS, lang, k)
    keys = [p.topic or p.chunk_id for p in passages]
    assert len(keys) == len(set(keys)) == min(k, len(groups)), "one passage per group, at most k"
    assert [p.score for p in passages] == sorted((p.score for p in passages), reverse=True)
    assert all(p.lang_fallback == (p.lang != lang) for p in passages), "flag iff other language"
