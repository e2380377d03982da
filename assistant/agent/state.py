"""The job a conversation describes, slot by slot, and how a turn's extracted slots amend it.

Every slot is optional: a conversation fills them over several turns. Money is kept in the
currency the user named and is never converted (catalog prices are USD; `assistant.agent.jobspec`
applies only USD amounts and says so for the others). Memory is GiB (2^30 bytes), time is hours.
"""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from tools.enums import Method, Objective, Optimizer, Precision, SpotPolicy

__all__ = [
    "SLOT_NAMES",
    "Checkpointing",
    "Currency",
    "JobState",
    "Money",
    "SlotName",
    "SlotUpdate",
    "apply_update",
]

Currency = Literal["USD", "EUR", "TRY"]
Checkpointing = Literal["none", "selective", "full"]
SlotName = Literal[
    "model",
    "method",
    "precision",
    "optimizer",
    "lora_rank",
    "seq_len",
    "micro_batch_size",
    "gradient_checkpointing",
    "num_gpus",
    "dataset_tokens",
    "dataset_samples",
    "epochs",
    "max_price_per_hour",
    "budget",
    "deadline_hours",
    "spot",
    "providers",
    "region",
    "gpus",
    "max_vram_gib",
    "objective",
]
SLOT_NAMES: tuple[str, ...] = get_args(SlotName)
# Slots that describe the same thing: setting one clears the others (the workload takes tokens
# or samples, never both).
_EXCLUSIVE: dict[str, tuple[str, ...]] = {
    "dataset_tokens": ("dataset_samples",),
    "dataset_samples": ("dataset_tokens",),
}


class Money(BaseModel):
    """An amount in the currency the user named; never converted."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    amount: float = Field(gt=0, description="amount in `currency`, e.g. 2.5")
    currency: Currency = Field(description="ISO 4217 code the user named: USD, EUR or TRY")


class _Slots(BaseModel):
    """The slots shared by the state and an update; None = not given."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str | None = Field(
        None,
        description="a spec tools.architectures.registry.resolve_model accepts: a registry id "
        "such as 'meta-llama/Llama-3.1-70B' or a bare parameter count such as '70B'",
    )
    method: Method | None = Field(None, description="pretrain, full, lora or qlora")
    precision: Precision | None = Field(None, description="fp32, bf16-mixed, fp16-mixed or bf16")
    optimizer: Optimizer | None = Field(None, description="optimizer as the estimator names it")
    lora_rank: int | None = Field(None, gt=0, description="LoRA rank r")
    seq_len: int | None = Field(None, gt=0, description="tokens per training sequence")
    micro_batch_size: int | None = Field(None, gt=0, description="sequences per GPU per step")
    gradient_checkpointing: Checkpointing | None = Field(
        None, description="activation recomputation: none, selective or full"
    )
    num_gpus: int | None = Field(None, gt=0, description="GPUs in all the user asked for")
    dataset_tokens: float | None = Field(None, gt=0, description="training tokens per epoch")
    dataset_samples: int | None = Field(None, gt=0, description="training samples per epoch")
    epochs: float | None = Field(None, gt=0, description="passes over the data")
    max_price_per_hour: Money | None = Field(
        None, description="most the user pays per hour for the whole cluster, as named"
    )
    budget: Money | None = Field(None, description="most the user pays for the whole run")
    deadline_hours: float | None = Field(None, gt=0, description="hours until it must be done")
    spot: SpotPolicy | None = Field(None, description="never, allowed or required")
    providers: list[str] | None = Field(
        None, description="provider keys as in the catalog, e.g. ['runpod', 'lambda']"
    )
    region: str | None = Field(
        None,
        description="region hint: an area ('eu', 'us', 'asia') or a region name as given "
        "(lower case), e.g. 'eu-west'",
    )
    gpus: list[str] | None = Field(
        None, description="preferred GPUs as canonical tools.gpus ids, e.g. ['H100-SXM']"
    )
    max_vram_gib: float | None = Field(
        None, gt=0, description="largest memory per GPU the user has or wants, GiB"
    )
    objective: Objective | None = Field(
        None, description="cost: cheapest total; time: fastest; price: cheapest per hour"
    )


class JobState(_Slots):
    """The job as understood so far; amended by `apply_update` after every turn."""

    def filled(self) -> dict[str, object]:
        """The slots that hold a value, by name."""
        return {name: value for name, value in self if value is not None}


class SlotUpdate(_Slots):
    """What one message says about the job: the slots it sets, plus slots it resets."""

    clear: list[SlotName] = Field(
        default_factory=list, description="slots the message resets to unknown"
    )

    def is_empty(self) -> bool:
        """True when the message set and reset nothing."""
        return not self.clear and all(self.slot_values()[n] is None for n in SLOT_NAMES)

    def slot_values(self) -> dict[str, object]:
        """Every slot (set or not) by name, without `clear`."""
        return {name: getattr(self, name) for name in SLOT_NAMES}

    def given(self) -> dict[str, object]:
        """The slots this update sets, by name."""
        return {name: v for name, v in self.slot_values().items() if v is not None}


def apply_update(state: JobState, update: SlotUpdate) -> JobState:
    """The state after one message: reset what `update.clear` names, then every slot the update
    sets replaces the old value (lists too: 'on RunPod or Lambda' replaces the providers)."""
    values = state.model_dump()
    for cleared in update.clear:
        values[cleared] = None
    for slot, value in update.given().items():
        values[slot] = value
        for other in _EXCLUSIVE.get(slot, ()):
            if other not in update.given():
                values[other] = None
    return JobState.model_validate(values)
