"""The labelled query sets of the retrieval benchmark parse and name real topics and jobs."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from benchmarks.retrieval.run import load_queries
from knowledge.base import JOB_METHODS
from knowledge.documents.entries import load_entries
from tools.languages import LANGUAGES

SETS = Path(__file__).resolve().parents[2] / "benchmarks" / "retrieval"


@pytest.mark.parametrize("name", ["queries.yaml", "heldout.yaml", "fresh.yaml"])
def test_query_set_labels_real_topics_and_jobs(name: str) -> None:
    queries = load_queries(SETS / name)
    topics = {entry.topic for entry in load_entries()}
    assert queries, f"{name} is empty"
    for query in queries:
        assert query.topics and set(query.topics) <= topics, f"{query.id}: {query.topics}"
        assert query.job is None or query.job in JOB_METHODS, f"{query.id}: job {query.job}"
    splits = Counter(q.split for q in queries)
    assert abs(splits["dev"] - splits["test"]) <= len({q.lang for q in queries})


def test_fresh_set_covers_the_six_languages_with_twin_questions() -> None:
    queries = load_queries(SETS / "fresh.yaml")
    per_lang = Counter(q.lang for q in queries)
    assert set(per_lang) == set(LANGUAGES) and min(per_lang.values()) >= 20
    for lang in LANGUAGES:
        jobs = {q.job for q in queries if q.lang == lang and q.job}
        assert "pretrain" in jobs and len(jobs) == 2, (
            f"{lang}: one pre-training, one fine-tuning job"
        )
