"""`Recent`: the last few results of a pure computation, by key, shared by the threads of a
process (several sessions search at once).

Used where the same search repeats across turns and sessions: the chat's caveat searches ask one
fixed query per language in every spot or multi-GPU turn, whoever the user is.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

__all__ = ["Recent"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Recent(Generic[K, V]):
    """Up to `size` values by key, least recently used dropped first. A value is shared by
    every caller that gets it: keep only values nobody changes."""

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError(f"size must be at least 1, got {size}")
        self.size = size
        self._kept: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._kept)

    def get(self, key: K) -> V | None:
        with self._lock:
            value = self._kept.get(key)
            if value is not None:
                self._kept.move_to_end(key)
            return value

    def put(self, key: K, value: V) -> V:
        with self._lock:
            self._kept[key] = value
            self._kept.move_to_end(key)
            if len(self._kept) > self.size:
                self._kept.popitem(last=False)
        return value

    def get_or_make(self, key: K, make: Callable[[], V]) -> V:
        """The kept value for `key`, else `make()` kept (computed outside the lock: two threads
        may both compute a missing value; both get an equal one)."""
        kept = self.get(key)
        return kept if kept is not None else self.put(key, make())

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()
