"""Pausing Python's cycle collector around an allocation-heavy loop (`tools.ranking.rank`)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["cyclic_gc_paused"]


@contextmanager
def cyclic_gc_paused(pause: bool) -> Iterator[None]:
    """With `pause`, pause Python's cycle collector while rows are built (reference counting
    still frees everything). The loop makes one object per row and no reference cycles, but on
    a large catalog each batch of new objects triggers collections that rescan it: on 100k rows
    (`benchmarks/ranking.py`, every row ranked) 1.6-1.8 s of CPU paused, 3.1-3.5 s not. On the
    built-in catalog it only defers the same young collection to its end (chat-turn replay:
    the same CPU either way), so small catalogs are not paused
    (`tools.ranking.rank.GC_PAUSE_ROWS`: the built-in catalog's 140 rows are not, the real
    catalogs' 833 and more still are). The previous state is restored, also on errors."""
    was_enabled = gc.isenabled()
    if pause:
        gc.disable()
    try:
        yield
    finally:
        if pause and was_enabled:
            gc.enable()
