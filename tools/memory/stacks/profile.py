"""The shape of a training-stack profile: mechanism values by release, defaults that depend on
the job, and the resolved mechanisms of one job (the data is in `profiles.py`).

A profile describes one stack's *current* release (`StackProfile.current`) and lists the older
releases where a mechanism differs (`Release`): a job's `stack_version` picks one, its own
mechanism values win over both. A value may depend on the job (`When`: torchtune's full
single-device recipes step the optimizer inside backward, its LoRA recipes do not).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from tools.enums import BaseDtype, Loss, SelectiveCheckpointing, Stack

__all__ = [
    "CURRENT",
    "MECHANISMS",
    "JobContext",
    "Mechanisms",
    "Release",
    "StackProfile",
    "When",
]

MECHANISMS: Final = (
    "loss", "selective_checkpointing", "activation_offload", "optimizer_in_backward",
    "frozen_base_dtype", "qlora_keeps_input", "qlora_lm_head", "qlora_double_quant", "repeat_kv",
    "fused_rmsnorm", "compile", "loop_keeps_output",
)  # fmt: skip
CURRENT: Final = "current"  # a job's stack_version when it names none: the current release


@dataclass(frozen=True, slots=True)
class JobContext:
    """What a job-dependent default looks at."""

    method: str = "lora"
    num_gpus: int = 1
    sharding: str = "deepspeed"
    zero_stage: int = 0
    precision: str = "bf16-mixed"

    @property
    def sharded_fsdp(self) -> bool:
        return self.sharding == "fsdp" and self.zero_stage >= 2


@dataclass(frozen=True, slots=True)
class When:
    """A default that depends on the job: `then` where `applies`, else `otherwise`."""

    then: Any
    otherwise: Any
    applies: Callable[[JobContext], bool]
    condition: str  # in words, e.g. "for full fine-tuning on one GPU"

    def pick(self, job: JobContext) -> Any:
        return self.then if self.applies(job) else self.otherwise


@dataclass(frozen=True, slots=True)
class Release:
    """A release of a stack and what it does differently from the profile's values."""

    version: str
    described: str  # the release, and where its mechanisms were read (file and commit)
    values: Mapping[str, tuple[Any, str]] = field(default_factory=dict)
    compiles_loss: bool | None = None  # None: as the profile
    fused_lora: bool | None = None
    upcasts_logits: bool = False  # the model returns fp32 logits (transformers < 4.46)


@dataclass(frozen=True, slots=True)
class StackProfile:
    """One stack's value for every mechanism in its current release, each with the reason (and
    source); the older releases that differ; what the stack does beyond the mechanisms."""

    name: Stack
    title: str
    values: Mapping[str, tuple[Any, str]]  # mechanism -> (value or When, reason with source)
    current: str  # the current release's version
    described: str  # the current release, and where it was read
    compiles_loss: bool = False  # its torch.compile switch compiles the loss
    fused_lora: bool = False  # LoRA layers run as fused kernels saving fewer tensors (layers.py)
    offload_stash: int = 5  # checkpoints left on the GPU when activations are offloaded
    older: tuple[Release, ...] = ()

    def release(self, version: str) -> Release | None:
        """The older release named `version`, None for the current one (raises if unknown)."""
        if version in (CURRENT, self.current):
            return None
        for item in self.older:
            if item.version == version:
                return item
        raise KeyError(version)

    @property
    def versions(self) -> tuple[str, ...]:
        return (self.current, *(r.version for r in self.older))


@dataclass(frozen=True, slots=True)
class Mechanisms:
    """The resolved mechanisms of one job: the job's own values, the rest from its stack's
    release, and the stack's other traits that release has."""

    stack: Stack
    version: str
    loss: Loss
    selective_checkpointing: SelectiveCheckpointing
    activation_offload: bool
    optimizer_in_backward: bool
    frozen_base_dtype: BaseDtype
    qlora_keeps_input: bool
    qlora_lm_head: bool
    qlora_double_quant: bool
    repeat_kv: bool
    fused_rmsnorm: bool
    compile: bool
    loop_keeps_output: bool
    given: frozenset[str]  # the mechanisms the job set itself
    reasons: Mapping[str, str]  # mechanism -> why the stack's release has its value
    compiles_loss: bool = False
    fused_lora: bool = False
    offload_stash: int = 5
    upcasts_logits: bool = False  # the model itself casts the logits to fp32 before the loss

    @property
    def compiled_loss(self) -> bool:
        """The loss runs compiled: compile is on and the stack's release compiles its loss."""
        return self.compile and self.compiles_loss

    def describe(self, names: tuple[str, ...] = MECHANISMS) -> list[str]:
        """One sentence per mechanism in `names`: its value, and whether the job gave it or
        the stack's profile supplied it (with the profile's reason)."""
        out = []
        for name in names:
            value = getattr(self, name)
            label = name.replace("_", " ")
            if name in self.given:
                out.append(f"Mechanism {label} = {value} (as given).")
            else:
                out.append(f"Mechanism {label} = {value} ({self.stack}: {self.reasons[name]}).")
        return out
