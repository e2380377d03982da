"""The job panel's form and the conversation's `JobState`, each mirrored into the other.

The form shows the slots a person most often changes: model, method, precision, sequence length,
micro-batch, GPUs, training tokens (millions), budget, price cap and spot. A blank field (or 0
where the form says "0 = none") is a slot left open; `build_job` then uses its stated default.
Money keeps the currency the conversation named; the form shows it and never converts it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from assistant.agent.jobspec import build_job
from assistant.agent.state import Currency, JobState, Money, SlotName, SlotUpdate, apply_update
from tools.catalog.instances import Catalog
from tools.enums import Method, Precision, SpotPolicy
from tools.errors import AdvisorError

TOKENS_UNIT = 1_000_000  # the form counts training tokens in millions
FORM_FIELDS = ("model", "method", "precision", "seq_len", "micro_batch_size", "num_gpus",
               "tokens_millions", "budget", "max_price_per_hour", "currency", "spot")  # fmt: skip


class JobForm(BaseModel):
    """The panel's field values; None = left open."""

    model_config = ConfigDict(extra="forbid")

    model: str | None = Field(None, description="registry name or size such as '70B'")
    method: Method | None = None
    precision: Precision | None = None
    seq_len: int | None = Field(None, gt=0, description="tokens per sequence")
    micro_batch_size: int | None = Field(None, gt=0, description="sequences per GPU per step")
    num_gpus: int | None = Field(None, gt=0, description="GPUs in all")
    tokens_millions: float | None = Field(None, gt=0, description="training tokens, millions")
    budget: float | None = Field(None, gt=0, description="most for the whole run, in `currency`")
    max_price_per_hour: float | None = Field(
        None, gt=0, description="most per hour for the whole cluster, in `currency`"
    )
    currency: Currency = "USD"
    spot: SpotPolicy | None = None


def _positive(value: Any) -> Any:
    """Blank text, None and non-positive numbers mean 'left open'."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, int | float) and value <= 0:
        return None
    return value.strip() if isinstance(value, str) else value


def form_from_values(**values: Any) -> JobForm:
    """A form from raw widget values (blank or 0 = open); whole-number fields are rounded."""
    cleaned = {key: _positive(value) for key, value in values.items()}
    for key in ("seq_len", "micro_batch_size", "num_gpus"):
        if cleaned.get(key) is not None:
            cleaned[key] = round(float(cleaned[key]))
    cleaned["currency"] = cleaned.get("currency") or "USD"
    return JobForm.model_validate(cleaned)


def form_from_state(state: JobState, defaults: Mapping[str, object] | None = None) -> JobForm:
    """The form mirroring `state`; a slot left open shows the default the plan used for it
    (`defaults`, e.g. from `JobPlan.assumed`). A samples-based workload shows no token count."""
    used = dict(defaults or {})
    filled = {**used, **state.filled()}
    money = state.budget or state.max_price_per_hour
    tokens = filled.get("dataset_tokens")
    if state.dataset_samples is not None or not isinstance(tokens, int | float):
        tokens = None
    return JobForm(
        model=state.model,
        method=filled.get("method"),
        precision=filled.get("precision"),
        seq_len=filled.get("seq_len"),
        micro_batch_size=filled.get("micro_batch_size"),
        num_gpus=state.num_gpus,
        tokens_millions=None if tokens is None else round(tokens / TOKENS_UNIT, 3),
        budget=state.budget.amount if state.budget else None,
        max_price_per_hour=state.max_price_per_hour.amount if state.max_price_per_hour else None,
        currency=money.currency if money else "USD",
        spot=filled.get("spot"),
    )


def _money(amount: float | None, currency: Currency) -> Money | None:
    return None if amount is None else Money(amount=amount, currency=currency)


def state_from_form(
    form: JobForm, previous: JobState, defaults: Mapping[str, object] | None = None
) -> JobState:
    """`previous` amended by the form: filled fields set their slot, open fields clear it, and
    slots the form does not show (optimizer, providers, region, ...) are kept. A field still
    showing the default the plan assumed for an open slot (`defaults`) leaves that slot open."""
    values: dict[str, Any] = {
        "model": form.model,
        "method": form.method,
        "precision": form.precision,
        "seq_len": form.seq_len,
        "micro_batch_size": form.micro_batch_size,
        "num_gpus": form.num_gpus,
        "dataset_tokens": None
        if form.tokens_millions is None
        else round(form.tokens_millions * TOKENS_UNIT),
        "budget": _money(form.budget, form.currency),
        "max_price_per_hour": _money(form.max_price_per_hour, form.currency),
        "spot": form.spot,
    }
    used = defaults or {}
    for slot, value in list(values.items()):
        if getattr(previous, slot) is None and value is not None and used.get(slot) == value:
            values[slot] = None  # the assumed default, untouched: the slot stays open
    if form.tokens_millions is None and previous.dataset_samples is not None:
        del values["dataset_tokens"]  # a samples workload has no token field to clear
    given = {k: v for k, v in values.items() if v is not None}
    cleared: list[SlotName] = [k for k, v in values.items() if v is None]  # type: ignore[misc]
    return apply_update(previous, SlotUpdate(**given, clear=cleared))


def form_values(form: JobForm) -> tuple[Any, ...]:
    """The form's values in `FORM_FIELDS` order (what the panel's widgets show)."""
    return tuple(getattr(form, name) for name in FORM_FIELDS)


def assumed_defaults(state: JobState, catalog: Catalog | None = None) -> dict[str, object]:
    """The defaults `build_job` would use for the slots `state` leaves open (none without a
    model, or when the job is invalid: the form then shows the open fields blank)."""
    try:
        plan = build_job(state, catalog)
    except AdvisorError:
        return {}
    return {item.slot: item.value for item in plan.assumed}
