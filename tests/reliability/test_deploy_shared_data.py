"""Several app processes share one data folder under `deploy.serve`: votes appended by all of
them stay whole lines, and files written with `write_atomic` (catalog snapshots, the index
pointer) are never seen half-written by a reader in another process."""

from __future__ import annotations

import fcntl
import json
import multiprocessing
import os
import threading
import time
from pathlib import Path

import pytest

from assistant.web.state.feedback import FeedbackRecord, append_feedback, make_record, read_feedback
from tools.files import write_atomic

pytestmark = pytest.mark.reliability

PROCESSES = 4
VOTES = 40
ANSWER = "Türkçe cevap, ünlü ve çok baytlı — " * 220  # ~8,000 characters, multi-byte UTF-8


def _vote(worker: int, n: int) -> FeedbackRecord:
    return make_record(
        session=f"w{worker}", message_index=n, rating="up" if n % 2 else "down",
        language="tr", question=f"soru {worker}-{n}", answer=ANSWER,
    )  # fmt: skip


def _append_many(path: str, worker: int, start: float) -> None:
    while time.time() < start:  # every process begins at the same moment
        time.sleep(0.001)
    for n in range(VOTES):
        append_feedback(Path(path), _vote(worker, n))


def test_votes_from_several_processes_are_whole_lines(tmp_path: Path) -> None:
    path = tmp_path / "feedback.jsonl"
    ctx = multiprocessing.get_context("fork")
    start = time.time() + 0.5
    procs = [ctx.Process(target=_append_many, args=(str(path), w, start)) for w in range(PROCESSES)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(timeout=60)
        assert proc.exitcode == 0, f"appending process exited with {proc.exitcode}"
    records = read_feedback(path)  # raises on any interleaved or cut line
    assert len(records) == PROCESSES * VOTES, "every vote of every process is kept"
    for worker in range(PROCESSES):
        mine = [r.message_index for r in records if r.session == f"w{worker}"]
        assert mine == list(range(VOTES)), f"process {worker}'s votes are whole and in order"
    assert all(r.answer == ANSWER for r in records), "no answer text is cut or mixed"


def test_append_waits_for_another_holder_of_the_file_lock(tmp_path: Path) -> None:
    """The lock is what makes appends safe across processes: a vote is not written while
    another process (here: another open file description) holds it."""
    path = tmp_path / "feedback.jsonl"
    append_feedback(path, _vote(0, 0))
    size = path.stat().st_size
    fd = os.open(path, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    writer = threading.Thread(target=append_feedback, args=(path, _vote(0, 1)))
    try:
        writer.start()
        writer.join(timeout=0.5)
        assert writer.is_alive(), "the append must wait while the file lock is held"
        assert path.stat().st_size == size, "nothing is written while the lock is held"
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
    writer.join(timeout=10)
    assert [r.message_index for r in read_feedback(path)] == [0, 1]


def test_new_feedback_file_is_owner_only(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "feedback.jsonl"
    append_feedback(path, _vote(0, 0))
    assert path.stat().st_mode & 0o777 == 0o600, "votes quote users: owner-only"


def _rewrite_many(path: str, worker: int, rounds: int) -> None:
    for n in range(rounds):
        rows = [{"writer": worker, "round": n, "row": i, "pad": "x" * 200} for i in range(300)]
        write_atomic(Path(path), json.dumps(rows))


def test_atomic_snapshots_are_never_read_half_written(tmp_path: Path) -> None:
    """Two processes rewrite one snapshot (as two workers refreshing prices would) while this
    one reads it: every read is one writer's complete file, and no temporary file stays."""
    path = tmp_path / "prices" / "snapshot.json"
    write_atomic(path, json.dumps([]))
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_rewrite_many, args=(str(path), w, 60)) for w in range(2)]
    for proc in procs:
        proc.start()
    reads = 0
    while any(proc.is_alive() for proc in procs) or reads == 0:
        rows = json.loads(path.read_text(encoding="utf-8"))  # fails on a torn file
        assert rows == [] or len({(r["writer"], r["round"]) for r in rows}) == 1, "one write"
        assert rows == [] or len(rows) == 300, "a whole snapshot"
        reads += 1
    for proc in procs:
        proc.join(timeout=60)
        assert proc.exitcode == 0
    assert sorted(p.name for p in path.parent.iterdir()) == ["snapshot.json"], "no temp files"
