"""What resolving a job records, and the helpers every path resolves fields with.

`Assumed` (a default used, with why), `JobNotice` (something not applied as asked) and
`ResolvedEstimate` (the job as far as its estimate needs it; `tools.advice.resolved.ResolvedJob`
adds the ranking's request); a field's value or its default (`value_or_default`, recorded as
assumed), the image side (`resolution`), money limits in USD (`money_limits`), and the notice
for a value the estimator rejects (`invalid_notice`). Nothing here needs the ranking or the
catalog, so `gpu-advisor estimate` imports neither.
"""

from __future__ import annotations

from datetime import date
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from tools.errors import InvalidInputError
from tools.job import DEFAULTS, FIELD_GROUPS, FieldName, JobSpec, Money, default_for
from tools.job.money import UnknownCurrencyError, to_usd
from tools.job.spec import MECHANISM_FIELDS
from tools.memory import EstimateInput

if TYPE_CHECKING:
    from tools.architectures.multimodal import MultimodalModel

__all__ = [
    "Assumed",
    "JobNotice",
    "NoticeKind",
    "ResolvedEstimate",
    "converted_notice",
    "invalid_notice",
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
     "lora_targets", "max_nodes", "stack", "stack_version", "offload_params",
     "cache_text_embeddings",
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


class ResolvedEstimate(BaseModel):
    """A job spec resolved as far as its memory estimate needs: the estimator's input, what was
    assumed and what was not applied (`tools.advice.estimate_job`). `missing` names the one
    field still needed (the model) when there is none; then `estimate_input` is None. An
    image-model job has no language estimator input: its `assumed` lists the defaults the image
    estimator used. `tools.advice.ResolvedJob` adds the ranking's request."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    spec: JobSpec
    missing: list[FieldName] = Field(default_factory=list)
    assumed: list[Assumed] = Field(default_factory=list)
    notices: list[JobNotice] = Field(default_factory=list)
    estimate_input: EstimateInput | None = None

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
