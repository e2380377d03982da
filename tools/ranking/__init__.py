"""Ranking cloud instances for a training job: plans, hours, billed cost and exclusions.

`models` holds the request and result types, `rank` the entry point, `prepare` what a request
computes once, `plans` the parallel plans and what each shards, `search` the first plan that fits
a machine shape, `screen` the constraint checks, `time` the training hours of a plan (kernels,
communication, pipeline, setup, failures), `costs` billing rounding and the spot interruption
model, `text` the one-line reasons and `wording` the stated assumptions. `images` holds the
request and plan search of image-model jobs (diffusion, VLMs) and `image_prepare` what their
ranking computes once; `rank` ranks them with everything else unchanged.
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
