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

from datetime import date, datetime
from functools import partial
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from tools.advice_images import check_language_job, estimate_image_spec, image_model
from tools.architectures.architecture import ModelArch
from tools.architectures.multimodal import MultimodalModel
from tools.architectures.registry import resolve_model
from tools.catalog import Catalog, is_area, matching_regions
from tools.catalog.instances import DEFAULT_STALE_PRICE_DAYS
from tools.errors import InvalidInputError
from tools.job import DEFAULTS, FIELD_GROUPS, FieldName, JobSpec, Money, default_for
from tools.job.money import UnknownCurrencyError, to_usd
from tools.job.spec import IMAGE_FIELDS, MECHANISM_FIELDS
from tools.memory import LORA_METHODS, EstimateInput, MemoryEstimate, estimate
from tools.ranking import rank
from tools.ranking.images import ImageRankRequest
from tools.ranking.models import Constraints, RankRequest, RankResult, Workload
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

# value_ignored: a value a message stated that the job cannot take (the chat leaves it out and
# keeps what the conversation had); the others come from resolving the job.
NoticeKind = Literal[
    "currency_converted",
    "currency_not_applied",
    "invalid_value",
    "region_not_found",
    "value_ignored",
]
_MONEY_FIELDS: tuple[FieldName, ...] = ("max_price_per_hour", "budget")
# Training fields passed to the estimator under the same name, in the order they are resolved.
_ESTIMATOR_FIELDS: tuple[str, ...] = tuple(
    name
    for name in FIELD_GROUPS["training"] + FIELD_GROUPS["plan"]
    if name != "cuda_context_gib" and name not in IMAGE_FIELDS
)
_LORA_ONLY = ("lora_rank", "lora_alpha", "lora_targets", "lora_dropout", "frozen_base_dtype")
_QLORA_ONLY = ("qlora_double_quant", "qlora_keeps_input", "qlora_lm_head")
# Defaults that are not shown as assumptions: implementation details a user rarely sets (they
# are in the estimate's own assumptions when they matter). The stack and its mechanisms are
# stated there too, with the profile each value comes from.
_QUIET = frozenset(
    {"lora_alpha", "lora_dropout", "engine", "optimizer_impl", "tensor_parallel",
     "sequence_parallel", "cuda_context_gib", "fragmentation", "gradient_accumulation_steps",
     "zero_stage", "sharding", "offload_optimizer", "attention", "qlora_double_quant",
     "lora_targets", "max_nodes", "stack", "offload_params", "cache_text_embeddings",
     *MECHANISM_FIELDS}
)  # fmt: skip


class Assumed(BaseModel):
    """A field left open and the default used for it, with why."""

    model_config = ConfigDict(frozen=True)

    field: FieldName
    value: Any = Field(description="the default used (JSON-safe)")
    reason: str = Field(description="why this default, with its source (English)")


class JobNotice(BaseModel):
    """Something not applied as asked. `kind`, `field` and `value` let an interface word it in
    any language; `message` is one English line."""

    model_config = ConfigDict(frozen=True)

    kind: NoticeKind
    field: FieldName
    value: str = Field(description="what was given, e.g. '2 EUR' or 'eu-north-9'")
    message: str
    usd: float | None = Field(default=None, description="currency_converted: the amount in USD")
    rate: float | None = Field(
        default=None, description="currency_converted: USD per unit of the given currency"
    )
    rate_date: date | None = Field(
        default=None, description="currency_converted: the day of the ECB reference rate"
    )


class ResolvedJob(BaseModel):
    """A job spec resolved: the estimator's input, the ranking's request, what was assumed and
    what was not applied. `missing` names the one field still needed (the model) when there is
    none; then `estimate_input` and `request` are None."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    spec: JobSpec
    missing: list[FieldName] = Field(default_factory=list)
    assumed: list[Assumed] = Field(default_factory=list)
    notices: list[JobNotice] = Field(default_factory=list)
    estimate_input: EstimateInput | None = None
    request: RankRequest | ImageRankRequest | None = None

    @property
    def ready(self) -> bool:
        """True when the job can be estimated and ranked (an image-model job has no language
        estimator input: its request holds the image job)."""
        if isinstance(self.request, ImageRankRequest):
            return True
        return self.request is not None and self.estimate_input is not None

    def assumed_values(self) -> dict[str, Any]:
        """Field -> default used, for every open field."""
        return {item.field: item.value for item in self.assumed}

    def shown_assumptions(self, purpose: Literal["estimate", "rank"] = "rank") -> list[Assumed]:
        """The defaults worth telling a user about (the job's substance, not engine details):
        for an estimate the training and plan fields, for a ranking the training, data and
        limit fields (the ranking chooses its own plan per instance)."""
        groups = ("training", "plan") if purpose == "estimate" else ("training", "data", "limits")
        wanted = {name for group in groups for name in FIELD_GROUPS[group]}  # type: ignore[index]
        return [item for item in self.assumed if item.field in wanted - _QUIET]


def resolve_job(
    spec: JobSpec, catalog: Catalog | None = None, *, strict: bool = True
) -> ResolvedJob:
    """The estimator input and ranking request `spec` describes, with every default it used.

    With `catalog`, each region hint must match a region of the catalog (an area such as 'eu'
    matches its regions); one that matches none is dropped with a notice. `strict` raises on a
    value the estimator rejects; otherwise that field is dropped with a notice and its default
    used."""
    notices, usd = _money(spec)
    spec_used, region_notices = _known_regions(spec, catalog)
    notices += region_notices
    if spec_used.model is None:
        return ResolvedJob(spec=spec, missing=["model"], notices=notices)
    image = image_model(spec_used)
    if image is not None:
        from tools.advice_image_rank import resolve_image  # deferred: it imports this module

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
            name = _spec_field(exc.field)
            if strict or name is None or getattr(spec_used, name) is None:
                raise
            notices.append(_invalid(name, getattr(spec_used, name), exc))
            if name == "model":
                return ResolvedJob(spec=spec, missing=["model"], notices=notices)
            spec_used = spec_used.model_copy(update={name: None})
    else:  # pragma: no cover - every retry clears one more field
        raise AssertionError("resolve_job retries exhausted")
    request = RankRequest(
        job=job,
        workload=_workload(spec_used, assumed),
        constraints=_constraints(spec_used, assumed, usd),
        objective=_value(spec_used, "objective", assumed, job.method),
    )
    return ResolvedJob(
        spec=spec, assumed=assumed, notices=notices, estimate_input=job, request=request
    )


def estimate_job(spec: JobSpec, *, strict: bool = True) -> tuple[ResolvedJob, MemoryEstimate]:
    """The job resolved and its memory estimate (the plan as given: one GPU by default); a
    diffusion pipeline or vision-language model goes through `tools.advice_images`."""
    image = image_model(spec)
    if image is not None:
        assumed: list[Assumed] = []
        side = resolution(spec, image, assumed)
        result = estimate_image_spec(spec, image, partial(_value_of, spec, assumed), side)
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


def _value(spec: JobSpec, name: str, assumed: list[Assumed], method: str | None) -> Any:
    """The field's value, or its default for `method` (recorded in `assumed`)."""
    value = getattr(spec, name)
    if value is not None:
        return value
    value = default_for(name, method)
    assumed.append(Assumed(field=name, value=value, reason=DEFAULTS[name].reason))
    return value


def resolution(spec: JobSpec, image: MultimodalModel, assumed: list[Assumed]) -> int:
    """The image side the job gives, else the model's own (recorded in `assumed`)."""
    if spec.resolution is not None:
        return spec.resolution
    reason = DEFAULTS["resolution"].reason
    assumed.append(Assumed(field="resolution", value=image.default_resolution, reason=reason))
    return image.default_resolution


def _value_of(spec: JobSpec, assumed: list[Assumed], name: str, method: str | None) -> Any:
    """`_value` in the argument order the image helpers call it with (name, method)."""
    return _value(spec, name, assumed, method)


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
    method = _value(spec, "method", assumed, None)
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
            _value(spec, name, assumed, method)
        else:
            fields[name] = getattr(spec, name)
    context = _value(spec, "cuda_context_gib", assumed, method)
    if spec.cuda_context_gib is not None:
        fields["cuda_context_bytes"] = round(context * GIB)
    return EstimateInput(**fields)


def _workload(spec: JobSpec, assumed: list[Assumed]) -> Workload:
    if spec.samples is not None:
        size: dict[str, float | int] = {"samples": spec.samples}
    else:
        size = {"tokens": float(_value(spec, "tokens", assumed, None))}
    return Workload(**size, epochs=float(_value(spec, "epochs", assumed, None)))


def _constraints(spec: JobSpec, assumed: list[Assumed], usd: dict[str, float]) -> Constraints:
    """The limits (money in USD, as converted); a GPU count asked for (`num_gpus`) bounds the
    clusters to exactly that many unless min/max GPUs say otherwise."""
    return Constraints(
        max_price_per_hour=usd.get("max_price_per_hour"),
        budget=usd.get("budget"),
        deadline_hours=spec.deadline_hours,
        providers=spec.providers,
        regions=spec.regions,
        gpus=spec.gpus,
        max_vram_gib=spec.max_vram_gib,
        spot=_value(spec, "spot", assumed, None),
        min_gpus=spec.min_gpus or spec.num_gpus,
        max_gpus=spec.max_gpus or spec.num_gpus,
        interconnect=spec.interconnect,
        max_nodes=_value(spec, "max_nodes", assumed, None),
    )


def _money(spec: JobSpec) -> tuple[list[JobNotice], dict[str, float]]:
    """Each money limit in USD, and a notice for each converted (rate, date) or not applicable."""
    notices: list[JobNotice] = []
    usd: dict[str, float] = {}
    for name in _MONEY_FIELDS:
        money: Money | None = getattr(spec, name)
        if money is None:
            continue
        what = "price cap" if name == "max_price_per_hour" else "budget"
        try:
            converted = to_usd(money)
        except UnknownCurrencyError:
            notices.append(
                JobNotice(
                    kind="currency_not_applied",
                    field=name,
                    value=str(money),
                    message=f"{what} given in {money.currency}, which has no ECB reference"
                    f" rate; catalog prices are USD; {what} filter not applied",
                )
            )
            continue
        usd[name] = converted.usd
        if not money.is_usd:
            notices.append(converted_notice(name, what, converted.usd, converted.rate,
                                            converted.rate_date, money))  # fmt: skip
    return notices, usd


def converted_notice(
    name: FieldName, what: str, usd: float, rate: float, day: date, money: Money
) -> JobNotice:
    """The notice of a limit converted to USD: the amount, the rate and its date."""
    return JobNotice(
        kind="currency_converted",
        field=name,
        value=str(money),
        message=f"{what} {money} converted to {usd:.2f} USD at the ECB reference rate of"
        f" {day.isoformat()} ({rate:.4f} USD per {money.currency})",
        usd=usd,
        rate=rate,
        rate_date=day,
    )


def _known_regions(spec: JobSpec, catalog: Catalog | None) -> tuple[JobSpec, list[JobNotice]]:
    """`spec` with the region hints no catalog region matches dropped, and a notice for each."""
    if not spec.regions or catalog is None:
        return spec, []
    names = {region for item in catalog for region in item.regions}
    kept, notices = [], []
    for hint in spec.regions:
        if matching_regions(hint, names) or (is_area(hint) and not names):
            kept.append(hint)
            continue
        notices.append(
            JobNotice(
                kind="region_not_found",
                field="regions",
                value=hint,
                message=f"no catalog region matches {hint!r}; region filter not applied",
            )
        )
    return spec.model_copy(update={"regions": kept or None}), notices


def _spec_field(name: str) -> FieldName | None:
    """The spec field an estimator error is about, if any."""
    if name in ("model", "parameter_count"):
        return "model"
    if name == "cuda_context_bytes":
        return "cuda_context_gib"
    return name if name in JobSpec.model_fields else None  # type: ignore[return-value]


def _invalid(name: FieldName, value: object, exc: InvalidInputError) -> JobNotice:
    return JobNotice(
        kind="invalid_value",
        field=name,
        value=str(value),
        message=f"{exc}; the default is used instead",
    )
