"""Ranking cloud instances for a training job: plans, hours, billed cost and exclusions.

`models` holds the request and result types, `rank` the entry point, `prepare` what a request
computes once, `plans` the parallel plan search per machine shape, `screen` the constraint
checks, `throughput` hours from FLOPs and utilisation, `costs` billing rounding and the spot
interruption model, and `text` the one-line reasons.
"""

from tools.ranking.models import (
    Constraints,
    Excluded,
    JobSummary,
    RankedOption,
    RankingAssumptions,
    RankRequest,
    RankResult,
    Workload,
)
from tools.ranking.rank import rank

__all__ = [
    "Constraints",
    "Excluded",
    "JobSummary",
    "RankRequest",
    "RankResult",
    "RankedOption",
    "RankingAssumptions",
    "Workload",
    "rank",
]
