"""From a described job to the estimator's and the ranking's inputs, saying what was assumed.

`resolve_job(spec)` is the one place a `JobSpec` becomes an `EstimateInput` and a `RankRequest`:
each open field takes its default from `tools.job.defaults` (listed in `ResolvedJob.assumed`
with the reason), money becomes a limit in USD (another currency converted at the dated ECB
reference rate, `tools.job.money.to_usd`, with a notice stating the rate and its date; a currency
without a rate is not applied, with a notice), and what cannot be applied as asked is a notice
(`ResolvedJob.notices`). `estimate_job` and `rank_job` run the estimator and the ranking on it;
the CLI, the Python API, the MCP and HTTP endpoints, the web form and the chat all call these,
so one job gives the same numbers and the same assumptions everywhere.

Strict resolution (the CLI and the API) raises an `InvalidInputError` for a value the estimator
rejects; lenient resolution (a conversation, a form) drops that value with a notice and uses the
default, so one mistyped number never stops the answer.
"""

from __future__ import annotations

from datetime import datetime
from functools import partial
from typing import Any

from tools.advice.image_rank import resolve_image
from tools.advice.images import check_language_job, estimate_image_spec, image_model
from tools.advice.resolved import (
    Assumed,
    JobNotice,
    NoticeKind,
    ResolvedJob,
    constraints_for,
    invalid_notice,
    known_regions,
    money_limits,
    resolution,
    spec_field,
    value_of,
    value_or_default,
)
from tools.architectures.architecture import ModelArch
from tools.architectures.registry import resolve_model
from tools.catalog import Catalog
from tools.catalog.instances import DEFAULT_STALE_PRICE_DAYS
from tools.errors import InvalidInputError
from tools.job import FIELD_GROUPS, JobSpec
from tools.job.spec import IMAGE_FIELDS
from tools.memory import LORA_METHODS, EstimateInput, MemoryEstimate, estimate
from tools.ranking import rank
from tools.ranking.models import RankRequest, RankResult, Workload
from tools.units import GIB

__all__ = [
    "Assumed",
    "JobNotice",
    "NoticeKind",
    "ResolvedJob",
    "estimate_job",
    "rank_job",
    "resolve_job",
]

# Training fields passed to the estimator under the same name, in the order they are resolved.
_ESTIMATOR_FIELDS: tuple[str, ...] = tuple(
    name
    for name in FIELD_GROUPS["training"] + FIELD_GROUPS["plan"]
    if name != "cuda_context_gib" and name not in IMAGE_FIELDS
)
_LORA_ONLY = ("lora_rank", "lora_alpha", "lora_targets", "lora_dropout", "frozen_base_dtype")
_QLORA_ONLY = ("qlora_double_quant", "qlora_keeps_input", "qlora_lm_head")


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
    spec_used = check_language_job(spec_used, strict)
    if strict and spec.tokens is not None and spec.samples is not None:
        raise InvalidInputError("samples", spec.samples, "give exactly one of tokens or samples")
    for _ in range(len(_ESTIMATOR_FIELDS) + 2):
        assumed: list[Assumed] = []
        try:
            job = _estimate_input(spec_used, assumed, strict)
            break
        except InvalidInputError as exc:
            name = spec_field(exc.field)
            if strict or name is None or getattr(spec_used, name) is None:
                raise
            notices.append(invalid_notice(name, getattr(spec_used, name), exc))
            if name == "model":
                return ResolvedJob(spec=spec, missing=["model"], notices=notices)
            spec_used = spec_used.model_copy(update={name: None})
    else:  # pragma: no cover - every retry clears one more field
        raise AssertionError("resolve_job retries exhausted")
    request = RankRequest(
        job=job,
        workload=_workload(spec_used, assumed),
        constraints=constraints_for(spec_used, assumed, usd),
        objective=value_or_default(spec_used, "objective", assumed, job.method),
    )
    return ResolvedJob(
        spec=spec, assumed=assumed, notices=notices, estimate_input=job, request=request
    )


def estimate_job(spec: JobSpec, *, strict: bool = True) -> tuple[ResolvedJob, MemoryEstimate]:
    """The job resolved and its memory estimate (the plan as given: one GPU by default); a
    diffusion pipeline or vision-language model goes through `tools.advice.images`."""
    image = image_model(spec)
    if image is not None:
        assumed: list[Assumed] = []
        side = resolution(spec, image, assumed)
        result = estimate_image_spec(spec, image, partial(value_of, spec, assumed), side)
        return ResolvedJob(spec=spec, assumed=assumed), result
    resolved = resolve_job(spec, strict=strict)
    if resolved.estimate_input is None:
        raise InvalidInputError("model", None, "a model name, a parameter count or a config")
    return resolved, estimate(resolved.estimate_input)


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


# --------------------------------------------------------------------------- the parts


def _model(spec: JobSpec) -> ModelArch:
    if isinstance(spec.model, ModelArch):
        return spec.model
    assert spec.model is not None
    return resolve_model(spec.model)


def _estimate_input(spec: JobSpec, assumed: list[Assumed], strict: bool) -> EstimateInput:
    """The estimator input: the model, the method, and every training and plan field the spec
    gives. Open fields are recorded in `assumed` with the default the estimator itself takes for
    them (its defaults are the job's), and are not passed, so the input says which values were
    given. LoRA fields of a job that is not LoRA are an error when `strict`, else left out (a
    conversation keeps a rank from an earlier LoRA question)."""
    method = value_or_default(spec, "method", assumed, None)
    fields: dict[str, Any] = {"model": _model(spec), "method": method}
    for name in _ESTIMATOR_FIELDS:
        if name == "method":
            continue
        given = getattr(spec, name) is not None
        if name in _LORA_ONLY and method not in LORA_METHODS and not (strict and given):
            continue
        if name in _QLORA_ONLY and method != "qlora" and not (strict and given):
            continue
        if not given:
            value_or_default(spec, name, assumed, method)
        else:
            fields[name] = getattr(spec, name)
    context = value_or_default(spec, "cuda_context_gib", assumed, method)
    if spec.cuda_context_gib is not None:
        fields["cuda_context_bytes"] = round(context * GIB)
    return EstimateInput(**fields)


def _workload(spec: JobSpec, assumed: list[Assumed]) -> Workload:
    if spec.samples is not None:
        size: dict[str, float | int] = {"samples": spec.samples}
    else:
        size = {"tokens": float(value_or_default(spec, "tokens", assumed, None))}
    return Workload(**size, epochs=float(value_or_default(spec, "epochs", assumed, None)))
