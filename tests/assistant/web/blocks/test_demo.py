"""The app's start: the warm-up after the page is served answers one turn nobody sees (so the
first person's turn finds what a turn reads loaded) and never stops the app."""

from __future__ import annotations

import gc
import logging
from pathlib import Path
from typing import Any

import pytest

from assistant.agent.conversation import Assistant, Session
from assistant.web.blocks import demo
from assistant.web.blocks.demo import GC_THRESHOLDS, WARM_UP_MESSAGE, settle_heap, warm_up
from tests.fakes.app import TinyKnowledge, make_settings
from tests.fakes.catalogs import web_catalog


def _assistant(tmp_path: Path) -> Assistant:
    settings = make_settings(tmp_path / "data")
    return Assistant(settings, knowledge=TinyKnowledge(), catalog=web_catalog())


def test_the_warm_up_opens_the_catalog_and_answers_one_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assistant = _assistant(tmp_path)
    seen: list[tuple[str, Any]] = []
    real = assistant.respond

    def respond(message: str, session: Session, **kwargs: Any) -> Any:
        turn = list(real(message, session, **kwargs))
        seen.append((message, session))
        return turn

    monkeypatch.setattr(assistant, "respond", respond)
    warm_up(assistant)
    assert [message for message, _ in seen] == [WARM_UP_MESSAGE]
    session = seen[0][1]
    assert session.state.model is not None, "the turn was answered as a job, as a person's is"
    assert not (tmp_path / "data" / "feedback.jsonl").exists(), "it leaves nothing behind"


def test_a_failed_warm_up_is_one_log_line_and_never_raises(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    assistant = _assistant(tmp_path)

    def broken() -> None:
        raise OSError("the index folder is gone")

    monkeypatch.setattr(assistant, "warm_up", broken)
    with caplog.at_level(logging.ERROR, logger="assistant.web"):
        warm_up(assistant)
    assert [r.getMessage() for r in caplog.records] == ["warm-up failed; the first turn opens all"]


def test_the_start_up_heap_is_frozen_after_the_warm_up(monkeypatch: pytest.MonkeyPatch) -> None:
    """The cycle collector no longer rescans what the warm-up left alive and runs less often;
    what is made later is still collected."""
    steps: list[str] = []
    monkeypatch.setattr(demo, "warm_up", lambda assistant: steps.append("warm-up"))
    monkeypatch.setattr(demo, "settle_heap", lambda: steps.append("settle") or 0)
    demo.start_up(object())  # type: ignore[arg-type]
    assert steps == ["warm-up", "settle"]

    thresholds = gc.get_threshold()
    try:
        frozen = settle_heap()
        # a frozen object freed by its last reference (another thread of the suite) leaves the
        # permanent generation, so the count can only fall after the freeze
        assert 1000 < gc.get_freeze_count() <= frozen
        assert gc.get_threshold() == GC_THRESHOLDS
        alive = {id(o) for o in gc.get_objects()}
        assert id(steps) not in alive, "an object alive at the freeze is not scanned any more"
        later: list[object] = []
        later.append(later)  # a cycle made after the freeze
        assert any(o is later for o in gc.get_objects())
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)


def test_the_queue_rebuilds_its_unread_monitoring_summary_rarely(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Gradio's queue reads QUEUE_ENV: its monitoring summary (a DataFrame of past events,
    never read with monitoring off) is rebuilt once per 1000 events, not after every one."""
    import gradio as gr
    from gradio.queueing import Queue

    from assistant.web.blocks.common import QUEUE_ENV

    for key, value in QUEUE_ENV.items():
        monkeypatch.setenv(key, value)
    with gr.Blocks() as blocks:
        gr.Textbox()
    queue = Queue(False, 1, 1.0, None, blocks)
    assert queue.ANAYLTICS_CACHE_FREQUENCY == 1000


def test_the_queue_sends_queue_places_on_a_timer_not_at_every_start() -> None:
    """Gradio's "auto" status updates message every waiting event whenever one starts (25
    messages a turn with 25 queued); the app's queue sends them every QUEUE_STATUS_EVERY_S."""
    import gradio as gr

    from assistant.web.blocks.common import CONCURRENCY, QUEUE_SIZE, QUEUE_STATUS_EVERY_S

    with gr.Blocks() as blocks:
        gr.Textbox()
    assert demo.queue_demo(blocks) is blocks
    queue = blocks._queue
    assert (queue.live_updates, queue.update_intervals) == (False, QUEUE_STATUS_EVERY_S)
    assert (queue.default_concurrency_limit, queue.max_size) == (CONCURRENCY, QUEUE_SIZE)
