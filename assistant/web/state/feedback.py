"""Thumbs-up/down feedback on answers, appended to a local JSON Lines file.

One line per vote, nothing sent anywhere. A record holds the vote, the answer it is about, the
question before it, the language and an anonymous per-browser-session id; no IP address, user
name or credential.

Several app processes may share one data folder (`python -m deploy.serve`), so a vote is
appended with O_APPEND under an exclusive `flock` on the file, the whole line in one go, and a
reader takes a shared lock: no line is ever interleaved with another or read half-written. A
thread lock serialises the threads of one process (and is all there is where `fcntl` is not).
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

FEEDBACK_FILE = "feedback.jsonl"
MAX_TEXT_CHARS = 8000  # longer answers are cut in the record

Rating = Literal["up", "down"]
_lock = threading.Lock()


class FeedbackRecord(BaseModel):
    """One vote on one assistant message."""

    time: str = Field(description="UTC time of the vote, ISO 8601")
    session: str = Field(description="anonymous id of the browser session")
    message_index: int = Field(ge=0, description="position of the message in the chat")
    rating: Rating
    language: str | None = Field(description="answer language, ISO 639-1")
    question: str = Field(description="the user message the answer replied to")
    answer: str


def feedback_path(data_dir: Path) -> Path:
    """Where votes are kept."""
    return data_dir / FEEDBACK_FILE


def rating_from_like(liked: bool | str | None) -> Rating | None:
    """The rating of a like event's value: True/'Like' -> up, False/'Dislike' -> down; None
    (a vote taken back) -> None."""
    if liked is None:
        return None
    if isinstance(liked, str):
        word = liked.strip().lower()
        return "up" if word == "like" else "down" if word == "dislike" else None
    return "up" if liked else "down"


def make_record(
    *,
    session: str,
    message_index: int,
    rating: Rating,
    language: str | None,
    question: str,
    answer: str,
    now: datetime | None = None,
) -> FeedbackRecord:
    """A record with the current UTC time and texts cut to MAX_TEXT_CHARS."""
    moment = now or datetime.now(UTC)
    return FeedbackRecord(
        time=moment.astimezone(UTC).isoformat(timespec="seconds"),
        session=session,
        message_index=message_index,
        rating=rating,
        language=language,
        question=question[:MAX_TEXT_CHARS],
        answer=answer[:MAX_TEXT_CHARS],
    )


@contextmanager
def _file_lock(fd: int, *, exclusive: bool) -> Iterator[None]:
    """An advisory lock on the open file `fd`, shared by every process that uses this module."""
    if sys.platform == "win32":
        yield
        return
    import fcntl

    fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
    try:
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)


def append_feedback(path: Path, record: FeedbackRecord) -> None:
    """Append `record` as one JSON line to `path` (folders created as needed), safely when
    several processes append to the same file."""
    line = (json.dumps(record.model_dump(mode="json"), ensure_ascii=False) + "\n").encode()
    with _lock:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            with _file_lock(fd, exclusive=True):
                view = memoryview(line)
                while view:  # a write may be short; the lock keeps the rest of the line next
                    view = view[os.write(fd, view) :]
        finally:
            os.close(fd)


def read_feedback(path: Path) -> list[FeedbackRecord]:
    """Every record in `path`, oldest first (an absent file has none)."""
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        return []
    with handle, _file_lock(handle.fileno(), exclusive=False):
        lines = handle.read().decode("utf-8").splitlines()
    return [FeedbackRecord.model_validate_json(line) for line in lines if line.strip()]


def record_for_like(
    chat: Sequence[Mapping[str, Any]],
    index: int,
    liked: bool | str | None,
    *,
    session: str,
    language: str | None,
) -> FeedbackRecord | None:
    """The record of a vote on message `index` of `chat`, with the last user message before it
    as the question; None when the vote was taken back or the index is not an answer."""
    rating = rating_from_like(liked)
    if rating is None or not 0 <= index < len(chat) or chat[index].get("role") != "assistant":
        return None
    question = next(
        (str(m.get("content", "")) for m in reversed(chat[:index]) if m.get("role") == "user"), ""
    )
    answer = str(chat[index].get("content", ""))
    return make_record(
        session=session, message_index=index, rating=rating, language=language,
        question=question, answer=answer,
    )  # fmt: skip
