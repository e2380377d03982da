"""From a described job to the estimator's and the ranking's inputs, saying what was assumed.

`resolve_job(spec)` is the one place a `JobSpec` becomes a `RankRequest`, on the `EstimateInput`
that `estimate_job` estimates (both from `estimate.language_input` for a language model): each
open field takes its default from `tools.job.defaults` (listed in `ResolvedJob.assumed`
with the reason), money becomes a limit in USD (another currency converted at the dated ECB
reference rate, `tools.job.money.to_usd`, with a notice stating the rate and its date; a currency
without a rate is not applied, with a notice), and what cannot be applied as asked is a notice
(`ResolvedJob.notices`). `estimate_job` and `rank_job` run the estimator and the ranking on it;
the CLI, the Python API, the MCP and HTTP endpoints, the web form and the chat all call these,
so one job gives the same numbers and the same assumptions everywhere.

Strict resolution (the CLI and the API) raises an `InvalidInputError` for a value the estimator
rejects; lenient resolution (a conversation, a form) drops that value with a notice and uses the
default, so one mistyped number never stops the answer.

The modules: `assumed` what resolving records (`Assumed`, `JobNotice`, `ResolvedEstimate`) and
the field helpers, `estimate` the estimate and the language estimator input, `images` image-model
jobs, `resolved` `ResolvedJob` and the limits, `image_rank` and `request` the ranking's request.
`estimate_job` needs neither the ranking nor the catalog: `resolve_job`, `rank_job` and
`ResolvedJob` are imported on first use, so `gpu-advisor estimate` does not load them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tools.advice.assumed import Assumed, JobNotice, NoticeKind, ResolvedEstimate
from tools.advice.estimate import estimate_job
from tools.lazy import on_first_use

if TYPE_CHECKING:
    from tools.advice.request import rank_job, resolve_job
    from tools.advice.resolved import ResolvedJob

__all__ = [
    "Assumed",
    "JobNotice",
    "NoticeKind",
    "ResolvedEstimate",
    "ResolvedJob",
    "estimate_job",
    "rank_job",
    "resolve_job",
]

# The names that need the ranking and the catalog, and the module defining each.
_ON_FIRST_USE = {
    "ResolvedJob": "tools.advice.resolved",
    "rank_job": "tools.advice.request",
    "resolve_job": "tools.advice.request",
}


__getattr__ = on_first_use(__name__, _ON_FIRST_USE)
