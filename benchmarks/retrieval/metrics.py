"""Ranking metrics over topic lists, and latency percentiles."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def first_hit(ranked: Sequence[str | None], relevant: Sequence[str]) -> int | None:
    """1-based rank of the first relevant topic in `ranked`, or None."""
    for rank, topic in enumerate(ranked, start=1):
        if topic in relevant:
            return rank
    return None


def query_scores(ranked: Sequence[str | None], relevant: Sequence[str]) -> dict[str, float]:
    """top-1 (0/1), recall@3 (0/1: a relevant topic in the top 3) and reciprocal rank."""
    rank = first_hit(ranked, relevant)
    return {
        "top1": float(rank == 1),
        "r3": float(rank is not None and rank <= 3),
        "mrr": 1.0 / rank if rank else 0.0,
    }


def mean_scores(rows: Sequence[dict[str, float]]) -> dict[str, float]:
    """Average of each metric over `rows` (zeros when empty)."""
    keys = ("top1", "r3", "mrr")
    if not rows:
        return dict.fromkeys(keys, 0.0)
    return {key: float(np.mean([row[key] for row in rows])) for key in keys}


def percentile_ms(seconds: Sequence[float], q: float) -> float:
    """The q-th percentile of durations in seconds, in milliseconds."""
    return float(np.percentile(np.asarray(seconds) * 1000.0, q)) if seconds else 0.0
