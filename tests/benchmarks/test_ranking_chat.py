"""The chat-turn replay of `benchmarks/ranking.py --chat`, on two recorded-like calls."""

from __future__ import annotations

from datetime import UTC, datetime

from benchmarks.ranking import JOBS, ChatCall, replay_chat
from tools.catalog import builtin_catalog
from tools.ranking.search import search_for


def test_replay_times_every_call_and_keeps_a_conversation_in_order() -> None:
    catalog = builtin_catalog().instances
    now = datetime(2026, 12, 2, tzinfo=UTC)
    first, second = JOBS.values()
    calls: list[ChatCall] = [(0, first, catalog, now, 120), (0, second, catalog, now, 120),
                             (1, first, catalog, None, 120)]  # fmt: skip
    got = replay_chat(calls, 2, in_order=True)
    assert set(got) == {"median_ms", "mean_ms", "collector_ms", "pass_s"}
    assert got["median_ms"] > 0 and 0 < got["pass_s"] < 60, got
    assert search_for.cache_info().currsize == 1, "the last conversation's one job is kept"
    replay_chat(calls[:2], 1, in_order=True)
    assert search_for.cache_info().currsize == 2, "a conversation keeps its jobs' searches"
    replay_chat(calls[:2], 1, in_order=False)
    assert search_for.cache_info().currsize == 1, "each ranking starts from nothing kept"
