"""`Recent`: the least recently used value goes first; get_or_make computes a missing one once."""

from __future__ import annotations

import functools
import threading

import pytest

from knowledge.retrieval.recent import Recent


def test_the_least_recently_used_value_is_dropped_first() -> None:
    kept: Recent[str, int] = Recent(2)
    kept.put("a", 1)
    kept.put("b", 2)
    assert kept.get("a") == 1  # "a" is now the newest
    kept.put("c", 3)
    assert (kept.get("a"), kept.get("b"), kept.get("c"), len(kept)) == (1, None, 3, 2)
    kept.put("a", 4)
    assert kept.get("a") == 4 and len(kept) == 2
    kept.clear()
    assert kept.get("a") is None and len(kept) == 0


def test_get_or_make_computes_a_missing_value_once() -> None:
    kept: Recent[str, list[int]] = Recent(4)
    made: list[str] = []

    def make(key: str) -> list[int]:
        made.append(key)
        return [len(made)]

    first = kept.get_or_make("q", lambda: make("q"))
    assert kept.get_or_make("q", lambda: make("q")) is first and made == ["q"]


def test_threads_share_it_without_losing_the_size_bound() -> None:
    kept: Recent[int, int] = Recent(8)

    def work(offset: int) -> None:
        for i in range(500):
            key = (i + offset) % 20
            kept.get_or_make(key, functools.partial(int, key))

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(kept) == 8


def test_a_size_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 1, got 0"):
        Recent(0)
