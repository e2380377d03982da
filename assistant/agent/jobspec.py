"""From a conversation's `JobState` to the typed inputs of the estimator and the ranking.

`build_job(state, catalog)` fills every slot the user left open with a stated default (each one
listed in `JobPlan.assumed`), applies only USD money (other currencies give a notice and no
filter: amounts are never converted), and reports the model as the one missing slot when there
is none. Defaults, and why:

- method `lora` (adapting a pretrained model; "from scratch" is the explicit `pretrain`);
- precision `bf16-mixed` (the usual mixed-precision recipe on Ampere and newer);
- optimizer `adamw`, or `paged-adamw-8bit` for QLoRA (Dettmers et al. 2023, arXiv:2305.14314,
  §3: paged optimizers are part of the QLoRA recipe);
- LoRA rank 16 (the estimator's default), sequence length 2048 tokens;
- micro-batch 1 sequence per GPU: the effective batch comes from gradient accumulation, which
  does not raise the peak; larger micro-batches grow the logits buffers fast with 128k-token
  vocabularies (Llama 3.1 8B QLoRA: 11.2 GiB at 1, 22.6 GiB at 4), so 1 is what tells whether
  a job fits at all;
- gradient checkpointing `full` for every method: PEFT's prepare_model_for_kbit_training turns
  it on for QLoRA, and large full fine-tunes run with activation recomputation; it trades about
  a third more compute for a much smaller memory peak, so the job fits on cheaper GPUs;
- workload 100M tokens, 1 epoch; spot `never` (on-demand prices); objective `cost`.

Filters the ranking's `Constraints` has no field for (the largest VRAM per GPU, preferred GPUs)
are in the plan; `filter_catalog(plan, catalog)` applies them before ranking.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from assistant.agent.state import JobState, Money, SlotName
from tools.catalog.instances import Catalog
from tools.errors import InvalidInputError
from tools.memory import EstimateInput
from tools.ranking.models import Constraints, RankRequest, Workload

__all__ = [
    "DEFAULTS",
    "AssumedDefault",
    "JobPlan",
    "Notice",
    "NoticeKind",
    "build_job",
    "filter_catalog",
    "region_matches",
]

DEFAULT_TOKENS = 100_000_000
DEFAULTS: dict[str, str | int | float] = {
    "method": "lora",
    "precision": "bf16-mixed",
    "optimizer": "adamw",
    "lora_rank": 16,
    "seq_len": 2048,
    "micro_batch_size": 1,
    "gradient_checkpointing": "full",
    "dataset_tokens": DEFAULT_TOKENS,
    "epochs": 1,
    "spot": "never",
    "objective": "cost",
}
QLORA_OPTIMIZER = "paged-adamw-8bit"
_LORA_METHODS = ("lora", "qlora")
# Slots passed to EstimateInput under the same name.
_ESTIMATOR_SLOTS: tuple[SlotName, ...] = (
    "precision", "optimizer", "seq_len", "micro_batch_size", "gradient_checkpointing",
)  # fmt: skip

NoticeKind = Literal["currency_not_applied", "invalid_value", "region_not_found"]


class AssumedDefault(BaseModel):
    """A slot the user left open and the value used for it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    slot: SlotName
    value: str | int | float


class Notice(BaseModel):
    """Something the plan did not apply as asked. `kind` + `slot` + `value` let the answer layer
    word it per language; `message` is one English line for logs and LLM prompts."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: NoticeKind
    slot: SlotName
    value: str = Field(description="what the user gave, e.g. '2 EUR' or 'eu'")
    message: str


class JobPlan(BaseModel):
    """Estimator and ranking inputs for a state, or the slot still missing."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    missing: list[SlotName] = Field(description="['model'] when no model is known, else []")
    job: EstimateInput | None = Field(description="the estimator input; None when missing")
    request: RankRequest | None = Field(description="the ranking request; None when missing")
    assumed: list[AssumedDefault] = Field(description="defaults used for open slots, in order")
    notices: list[Notice] = Field(description="what was not applied as asked, and why")
    max_vram_gib: float | None = Field(
        description="keep only instances with at most this much memory per GPU, GiB"
    )
    gpus: list[str] | None = Field(description="keep only these canonical GPU ids")
    region: str | None = Field(description="the region hint as extracted")

    @property
    def ready(self) -> bool:
        """True when the job can be estimated and ranked."""
        return self.request is not None


def build_job(state: JobState, catalog: Catalog | None = None) -> JobPlan:
    """The plan for `state`. With `catalog`, a region hint becomes the catalog's matching region
    names in `Constraints.regions`; without one, the hint is left to the caller."""
    notices = _money_notices(state)
    regions, region_notice = _regions(state.region, catalog)
    notices += region_notice
    if state.model is None:
        return _plan(state, ["model"], None, None, [], notices)
    assumed: list[AssumedDefault] = []
    try_state = state
    for _ in range(len(_ESTIMATOR_SLOTS) + 3):
        assumed = []
        try:
            job = _estimate_input(try_state, assumed)
            break
        except InvalidInputError as exc:
            slot = _slot_of(exc.field)
            if slot is None or getattr(try_state, slot) is None:
                raise
            notices.append(_invalid(slot, getattr(try_state, slot), exc))
            try_state = try_state.model_copy(update={slot: None})
            if slot == "model":
                return _plan(state, ["model"], None, None, [], notices)
    else:  # pragma: no cover - every retry clears one more slot
        raise AssertionError("build_job retries exhausted")
    request = RankRequest(
        job=job,
        workload=_workload(try_state, assumed),
        constraints=_constraints(try_state, regions, assumed),
        objective=_default(try_state, "objective", assumed),
    )
    return _plan(state, [], job, request, assumed, notices)


def _plan(
    state: JobState,
    missing: list[SlotName],
    job: EstimateInput | None,
    request: RankRequest | None,
    assumed: list[AssumedDefault],
    notices: list[Notice],
) -> JobPlan:
    return JobPlan(
        missing=missing, job=job, request=request, assumed=assumed, notices=notices,
        max_vram_gib=state.max_vram_gib, gpus=state.gpus, region=state.region,
    )  # fmt: skip


def _default(state: JobState, slot: SlotName, assumed: list[AssumedDefault]) -> Any:
    """The slot's value, or its default (recorded in `assumed`)."""
    value = getattr(state, slot)
    if value is not None:
        return value
    value = DEFAULTS[slot]
    if slot == "optimizer" and state.method == "qlora":
        value = QLORA_OPTIMIZER
    assumed.append(AssumedDefault(slot=slot, value=value))
    return value


def _estimate_input(state: JobState, assumed: list[AssumedDefault]) -> EstimateInput:
    method = _default(state, "method", assumed)
    with_method = state.model_copy(update={"method": method})
    fields: dict[str, object] = {
        slot: _default(with_method, slot, assumed) for slot in _ESTIMATOR_SLOTS
    }
    if method in _LORA_METHODS:
        fields["lora_rank"] = _default(state, "lora_rank", assumed)
    if state.num_gpus is not None:
        fields["num_gpus"] = state.num_gpus
    return EstimateInput(model=state.model, method=method, **fields)


def _workload(state: JobState, assumed: list[AssumedDefault]) -> Workload:
    if state.dataset_samples is not None:
        size: dict[str, float | int] = {"samples": state.dataset_samples}
    else:
        size = {"tokens": float(_default(state, "dataset_tokens", assumed))}
    epochs = float(_default(state, "epochs", assumed))
    return Workload(**size, epochs=epochs)


def _constraints(
    state: JobState, regions: list[str] | None, assumed: list[AssumedDefault]
) -> Constraints:
    return Constraints(
        max_price_per_hour=_usd(state.max_price_per_hour),
        budget=_usd(state.budget),
        deadline_hours=state.deadline_hours,
        providers=state.providers,
        regions=regions,
        spot=_default(state, "spot", assumed),
        min_gpus=state.num_gpus,
        max_gpus=state.num_gpus,
    )


def _usd(money: Money | None) -> float | None:
    return money.amount if money is not None and money.currency == "USD" else None


def _money_notices(state: JobState) -> list[Notice]:
    notices = []
    for slot in ("max_price_per_hour", "budget"):
        money: Money | None = getattr(state, slot)
        if money is not None and money.currency != "USD":
            what = "price cap" if slot == "max_price_per_hour" else "budget"
            notices.append(Notice(
                kind="currency_not_applied", slot=slot, value=f"{money.amount:g} {money.currency}",
                message=f"{what} given in {money.currency}; catalog prices are USD; "
                f"{what} filter not applied",
            ))  # fmt: skip
    return notices


def _slot_of(field: str) -> SlotName | None:
    """The state slot an estimator error is about, if any."""
    if field in ("model", "parameter_count"):
        return "model"
    for slot in (*_ESTIMATOR_SLOTS, "lora_rank", "num_gpus"):
        if slot == field:
            return slot
    return None


def _invalid(slot: SlotName, value: object, exc: InvalidInputError) -> Notice:
    return Notice(kind="invalid_value", slot=slot, value=str(value),
                  message=f"{exc}; the default is used instead")  # fmt: skip


# --------------------------------------------------------------------------- catalog-side filters


def _regions(hint: str | None, catalog: Catalog | None) -> tuple[list[str] | None, list[Notice]]:
    """The catalog's region names matching `hint` (None: no filter), with a notice if none do."""
    if hint is None or catalog is None:
        return None, []
    names = sorted({r for item in catalog for r in item.regions})
    matched = [name for name in names if region_matches(hint, name)]
    if matched:
        return matched, []
    message = f"no catalog region matches {hint!r}; region filter not applied"
    return None, [Notice(kind="region_not_found", slot="region", value=hint, message=message)]


def region_matches(hint: str, region: str) -> bool:
    """Whether catalog region `region` lies in the area or region `hint` ('eu', 'us', 'asia',
    or a region name such as 'eu-west', which matches 'eu-west-1' and 'eu-west-2')."""
    from tools.catalog.regions import region_matches as matches

    return matches(hint, region)


def filter_catalog(plan: JobPlan, catalog: Catalog) -> Catalog:
    """The instances the plan's own filters keep: preferred GPUs, at most `max_vram_gib` per GPU."""
    kept = catalog.filter(gpu=plan.gpus) if plan.gpus else catalog
    if plan.max_vram_gib is not None:
        cap = plan.max_vram_gib
        kept = Catalog(item for item in kept if item.vram_per_gpu_gib <= cap)
    return kept
