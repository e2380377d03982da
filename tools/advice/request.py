"""From a described job to the ranking's request, and its ranking.

`resolve_job(spec)` is the one place a `JobSpec` becomes a `RankRequest` (language model: the
estimator input of `tools.advice.estimate.language_input`, the run's size, the limits, the
objective) or an `ImageRankRequest` (`tools.advice.image_rank`), with every default it used;
`rank_job` ranks a catalog for it. Region hints are checked against the catalog given.
"""

from __future__ import annotations

from datetime import datetime

from tools.advice.assumed import Assumed, money_limits, value_or_default
from tools.advice.estimate import image_model, language_input
from tools.advice.image_rank import resolve_image
from tools.advice.resolved import ResolvedJob, constraints_for, known_regions
from tools.catalog import Catalog
from tools.catalog.instances import DEFAULT_STALE_PRICE_DAYS
from tools.errors import InvalidInputError
from tools.job import JobSpec
from tools.ranking import rank
from tools.ranking.models import RankRequest, RankResult, Workload

__all__ = ["rank_job", "resolve_job"]


def resolve_job(
    spec: JobSpec, catalog: Catalog | None = None, *, strict: bool = True
) -> ResolvedJob:
    """The estimator input and ranking request `spec` describes, with every default it used.

    With `catalog`, each region hint must match a region of the catalog (an area such as 'eu'
    matches its regions); one that matches none is dropped with a notice. `strict` raises on a
    value the estimator rejects; otherwise that field is dropped with a notice and its default
    used."""
    notices, usd = money_limits(spec)
    spec_used, region_notices = known_regions(spec, catalog)
    notices += region_notices
    if spec_used.model is None:
        return ResolvedJob(spec=spec, missing=["model"], notices=notices)
    image = image_model(spec_used)
    if image is not None:
        return resolve_image(spec, spec_used, image, notices, usd, strict)
    spec_used, assumed, job = language_input(spec_used, notices, strict)
    if job is None:
        return ResolvedJob(spec=spec, missing=["model"], notices=notices)
    request = RankRequest(
        job=job,
        workload=_workload(spec_used, assumed),
        constraints=constraints_for(spec_used, assumed, usd),
        objective=value_or_default(spec_used, "objective", assumed, job.method),
    )
    return ResolvedJob(
        spec=spec, assumed=assumed, notices=notices, estimate_input=job, request=request
    )


def rank_job(
    spec: JobSpec,
    catalog: Catalog,
    *,
    top: int | None = None,
    strict: bool = True,
    now: datetime | None = None,
    stale_price_days: int = DEFAULT_STALE_PRICE_DAYS,
) -> tuple[ResolvedJob, RankResult]:
    """The job resolved against `catalog` and the ranking of the catalog for it; with `now`
    (timezone-aware) every ranked row carries its price's age and stale flag."""
    resolved = resolve_job(spec, catalog, strict=strict)
    if resolved.request is None:
        raise InvalidInputError("model", None, "a model name, a parameter count or a config")
    request = resolved.request.model_copy(update={"top": top}) if top else resolved.request
    result = rank(request, catalog.instances, now=now, stale_price_days=stale_price_days)
    converted = [n.message for n in resolved.notices if n.kind == "currency_converted"]
    if converted:  # the ranking's own record of the limits it applied, rates included
        job = result.job.model_copy(update={"assumptions": [*converted, *result.job.assumptions]})
        result = result.model_copy(update={"job": job})
    return resolved, result


def _workload(spec: JobSpec, assumed: list[Assumed]) -> Workload:
    if spec.samples is not None:
        size: dict[str, float | int] = {"samples": spec.samples}
    else:
        size = {"tokens": float(value_or_default(spec, "tokens", assumed, None))}
    return Workload(**size, epochs=float(value_or_default(spec, "epochs", assumed, None)))
