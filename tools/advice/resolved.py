"""The parts of a resolved job that the language and image paths share.

`Assumed` (a default used, with why), `JobNotice` (something not applied as asked) and
`ResolvedJob`; and the helpers both paths resolve fields with: a field's value or its default
(`value_or_default`, recorded as assumed), the image side (`resolution`), the limits
(`constraints_for`, money in USD via `money_limits`), region hints checked against a catalog
(`known_regions`), and the notice for a value the estimator rejects (`invalid_notice`).
"""

from __future__ import annotations

from datetime import date
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from tools.architectures.multimodal import MultimodalModel
from tools.catalog import Catalog, is_area, matching_regions
from tools.errors import InvalidInputError
from tools.job import DEFAULTS, FIELD_GROUPS, FieldName, JobSpec, Money, default_for
from tools.job.money import UnknownCurrencyError, to_usd
from tools.job.spec import MECHANISM_FIELDS
from tools.memory import EstimateInput
from tools.ranking.images import ImageRankRequest
from tools.ranking.models import Constraints, RankRequest

__all__ = [
    "Assumed",
    "JobNotice",
    "NoticeKind",
    "ResolvedJob",
    "constraints_for",
    "converted_notice",
    "invalid_notice",
    "known_regions",
    "money_limits",
    "resolution",
    "spec_field",
    "value_of",
    "value_or_default",
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


def value_or_default(spec: JobSpec, name: str, assumed: list[Assumed], method: str | None) -> Any:
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


def value_of(spec: JobSpec, assumed: list[Assumed], name: str, method: str | None) -> Any:
    """`value_or_default` in the argument order the image helpers call it with (name, method)."""
    return value_or_default(spec, name, assumed, method)


def constraints_for(spec: JobSpec, assumed: list[Assumed], usd: dict[str, float]) -> Constraints:
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
        spot=value_or_default(spec, "spot", assumed, None),
        min_gpus=spec.min_gpus or spec.num_gpus,
        max_gpus=spec.max_gpus or spec.num_gpus,
        interconnect=spec.interconnect,
        max_nodes=value_or_default(spec, "max_nodes", assumed, None),
    )


def money_limits(spec: JobSpec) -> tuple[list[JobNotice], dict[str, float]]:
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


def known_regions(spec: JobSpec, catalog: Catalog | None) -> tuple[JobSpec, list[JobNotice]]:
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


def spec_field(name: str) -> FieldName | None:
    """The spec field an estimator error is about, if any."""
    if name in ("model", "parameter_count"):
        return "model"
    if name == "cuda_context_bytes":
        return "cuda_context_gib"
    return name if name in JobSpec.model_fields else None  # type: ignore[return-value]


def invalid_notice(name: FieldName, value: object, exc: InvalidInputError) -> JobNotice:
    return JobNotice(
        kind="invalid_value",
        field=name,
        value=str(value),
        message=f"{exc}; the default is used instead",
    )
