"""Thumbs feedback stored as JSON Lines."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from assistant.web.state.feedback import (
    MAX_TEXT_CHARS,
    append_feedback,
    feedback_path,
    make_record,
    rating_from_like,
    read_feedback,
    record_for_like,
)

CHAT: list[dict[str, Any]] = [
    {"role": "user", "content": "QLoRA 70B?"},
    {"role": "assistant", "content": "{}", "metadata": {"title": "estimate_memory"}},
    {"role": "assistant", "content": "Rent an H100."},
]


def test_like_values_map_to_ratings() -> None:
    assert [rating_from_like(v) for v in (True, False, "Like", "dislike", None, "Other")] == [
        "up", "down", "up", "down", None, None,
    ]  # fmt: skip


def test_record_for_like_takes_the_question_before_the_answer() -> None:
    record = record_for_like(CHAT, 2, False, session="s1", language="en")
    assert record is not None
    assert (record.rating, record.question, record.answer, record.message_index) == (
        "down", "QLoRA 70B?", "Rent an H100.", 2,
    )  # fmt: skip
    assert record_for_like(CHAT, 0, True, session="s1", language="en") is None, "user message"
    assert record_for_like(CHAT, 9, True, session="s1", language="en") is None, "out of range"
    assert record_for_like(CHAT, 2, None, session="s1", language="en") is None, "vote undone"


def test_records_append_as_json_lines_and_read_back(tmp_path: Path) -> None:
    path = feedback_path(tmp_path / "data")
    moment = datetime(2025, 7, 1, 12, 0, tzinfo=UTC)
    first = make_record(session="a", message_index=2, rating="up", language="tr",
                        question="q", answer="x" * (MAX_TEXT_CHARS + 5), now=moment)  # fmt: skip
    append_feedback(path, first)
    append_feedback(path, first.model_copy(update={"rating": "down"}))
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2 and json.loads(lines[0])["time"] == "2025-07-01T12:00:00+00:00"
    assert len(json.loads(lines[0])["answer"]) == MAX_TEXT_CHARS, "long answers are cut"
    assert [r.rating for r in read_feedback(path)] == ["up", "down"]
    assert read_feedback(tmp_path / "absent.jsonl") == []


def test_concurrent_votes_never_interleave_lines(tmp_path: Path) -> None:
    path = tmp_path / "feedback.jsonl"
    record = make_record(session="s", message_index=1, rating="up", language="en",
                         question="q" * 3000, answer="a" * 3000)  # fmt: skip
    threads = [threading.Thread(target=append_feedback, args=(path, record)) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(read_feedback(path)) == 16, "every line is whole JSON"
