"""The estimator's input: one resolved training setup, with every field concrete and checked.

`EstimateInput` is what `tools.memory.estimator.estimate` counts. Its defaults are the job's
(`tools.job.defaults`, method-aware where practice differs: paged 8-bit AdamW for QLoRA), so
`EstimateInput(model=m, method="qlora")` is the job `tools.advice.resolve_job` resolves for the
same two fields. It also checks what a job spec cannot check field by field: LoRA fields only
with LoRA methods, a rank below the hidden size, targets the model has, offload only under ZeRO,
a tensor-parallel degree that divides the heads. A failure is an `InvalidInputError` saying what
was wrong and what is valid.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from tools.architectures.architecture import ModelArch
from tools.architectures.registry import resolve_model
from tools.enums import (
    Attention,
    BaseDtype,
    Checkpointing,
    Device,
    Engine,
    Loss,
    Method,
    Optimizer,
    OptimizerImpl,
    Precision,
    ResolvedEngine,
    ResolvedOptimizerImpl,
    SelectiveCheckpointing,
    Sharding,
    Stack,
)
from tools.errors import InvalidInputError, invalid_input
from tools.job.defaults import DEFAULTS, default_for
from tools.job.limits import (
    MAX_BATCH,
    MAX_GPUS,
    MAX_SEQ_LEN,
    VALID,
    attention_alias,
    zero_alias,
)
from tools.memory.activations import DROPOUT_FAMILIES
from tools.memory.stacks.profiles import (
    MECHANISMS,
    JobContext,
    Mechanisms,
    mechanisms_for,
    stack_versions,
)
from tools.memory.states.inventory import resolve_targets
from tools.units import GIB

__all__ = ["LORA_METHODS", "EstimateInput"]

LORA_METHODS = ("lora", "qlora")
_MECHANISM_VALUES = attrgetter(*MECHANISMS)  # the job's own values, one C-level call
_LORA_FIELDS = ("lora_rank", "lora_alpha", "lora_targets", "lora_dropout")
_QLORA_FIELDS = ("qlora_double_quant", "qlora_keeps_input", "qlora_lm_head")
_METHOD_AWARE = ("optimizer",)  # fields whose default depends on the method
MAX_CONTEXT_BYTES = 64 * GIB

# What is valid, per field: the job's own words, in bytes where the estimator counts bytes.
_VALID: dict[str, str] = {
    **VALID,
    "num_gpus": f"an integer from 1 to {MAX_GPUS} (data-parallel ranks)",
    "cuda_context_bytes": f"an integer from 0 to {MAX_CONTEXT_BYTES} (bytes)",
}


def _d(name: str) -> Any:
    """The job default of `name` for the default method (method-aware ones are filled per
    method by `EstimateInput._fill_defaults`)."""
    return DEFAULTS[name].value


class EstimateInput(BaseModel):
    """One training setup. Sizes are per GPU; `num_gpus` is the data-parallel degree."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=False)

    model: ModelArch = Field(
        description="the architecture; a name, config.json path or count such as '7e9' is"
        " resolved through tools.architectures.registry"
    )
    method: Method = Field(_d("method"), description="pretrain, full, lora or qlora")
    precision: Precision = Field(_d("precision"), description="bf16/fp16-mixed, bf16, fp32 or fp8")
    optimizer: Optimizer = Field(_d("optimizer"), description="default: per method")
    lora_rank: int = Field(_d("lora_rank"), gt=0, description="LoRA rank r")
    lora_alpha: float | None = Field(
        _d("lora_alpha"), gt=0, description="LoRA alpha; default 2 x rank; does not change memory"
    )
    lora_targets: str | tuple[str, ...] = Field(
        _d("lora_targets"), description="'all-linear', 'attention', 'mlp' or module names"
    )
    lora_dropout: float = Field(_d("lora_dropout"), ge=0, lt=1, description="LoRA dropout")
    qlora_double_quant: bool | None = Field(
        _d("qlora_double_quant"),
        description="QLoRA: quantize the NF4 block constants; None: the stack's choice",
    )
    micro_batch_size: int = Field(
        _d("micro_batch_size"), gt=0, le=MAX_BATCH, description="sequences per GPU per step"
    )
    seq_len: int = Field(_d("seq_len"), gt=0, le=MAX_SEQ_LEN, description="tokens per sequence")
    gradient_checkpointing: Checkpointing = Field(_d("gradient_checkpointing"))
    attention: Attention = Field(
        _d("attention"), description="sdpa = fused kernels: no s x s tensors"
    )
    dropout: bool | None = Field(
        None,
        description="dropout in attention/residuals; default: on for GPT-2, BERT and T5"
        " families, off otherwise",
    )
    zero_stage: int = Field(_d("zero_stage"), ge=0, le=3, description="ZeRO stage 0-3")
    sharding: Sharding = Field(
        _d("sharding"), description="which ZeRO-3 implementation decides the gathered unit"
    )
    num_gpus: int = Field(_d("num_gpus"), gt=0, le=MAX_GPUS, description="data-parallel degree")
    tensor_parallel: int = Field(_d("tensor_parallel"), gt=0, description="tensor-parallel degree")
    sequence_parallel: bool = Field(_d("sequence_parallel"), description="with TP")
    offload_optimizer: bool = Field(_d("offload_optimizer"), description="optimizer state to CPU")
    cuda_context_bytes: int = Field(
        int(_d("cuda_context_gib") * GIB),
        ge=0,
        le=MAX_CONTEXT_BYTES,
        description="CUDA context + framework bytes per GPU",
    )
    fragmentation: float = Field(
        _d("fragmentation"),
        ge=0,
        le=1,
        description="allocator margin, share of the step's transient bytes",
    )
    engine: Engine = Field(_d("engine"), description="auto, pytorch or deepspeed")
    device: Device = Field(
        "cuda",
        description="cuda; cpu models PyTorch's CPU kernels (no CUDA context; used to calibrate"
        " against exact CPU measurements)",
    )
    optimizer_impl: OptimizerImpl = Field(
        _d("optimizer_impl"), description="auto, foreach, for-loop or fused"
    )
    gradient_accumulation_steps: int = Field(
        _d("gradient_accumulation_steps"), gt=0, le=MAX_BATCH, description="micro-batches/step"
    )
    offload_params: bool = Field(
        _d("offload_params"), description="ZeRO-3: weights in CPU RAM, fetched per layer"
    )
    stack: Stack = Field(_d("stack"), description="the training stack; supplies open mechanisms")
    stack_version: str = Field(
        _d("stack_version"), max_length=32, description="the stack's release (current or older)"
    )
    # The stack's mechanisms: None takes the stack profile's value (`mechanisms`).
    loss: Loss | None = Field(_d("loss"), description="cross-entropy implementation")
    selective_checkpointing: SelectiveCheckpointing | None = Field(
        _d("selective_checkpointing"), description="what selective recomputation keeps"
    )
    activation_offload: bool | None = Field(
        _d("activation_offload"), description="saved activations moved to CPU RAM"
    )
    optimizer_in_backward: bool | None = Field(
        _d("optimizer_in_backward"), description="optimizer stepped inside the backward pass"
    )
    frozen_base_dtype: BaseDtype | None = Field(
        _d("frozen_base_dtype"), description="storage of the frozen base's non-quantized weights"
    )
    qlora_keeps_input: bool | None = Field(
        _d("qlora_keeps_input"), description="each 4-bit layer keeps its input for backward"
    )
    qlora_lm_head: bool | None = Field(
        _d("qlora_lm_head"), description="the lm_head is quantized to 4-bit too"
    )
    repeat_kv: bool | None = Field(
        _d("repeat_kv"), description="K and V repeated to every query head before attention"
    )
    fused_rmsnorm: bool | None = Field(_d("fused_rmsnorm"), description="fused RMSNorm kernel")
    compile: bool | None = Field(_d("compile"), description="torch.compile on (what: the stack's)")
    loop_keeps_output: bool | None = Field(
        _d("loop_keeps_output"), description="the loop holds the model's output through the step"
    )

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise invalid_input(exc, _VALID) from None

    @model_validator(mode="before")
    @classmethod
    def _fill_defaults(cls, data: Any) -> Any:
        """Resolve a model given by name, read ZeRO and attention aliases, and fill the
        method-aware defaults for the job's method."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        if isinstance(data.get("model"), str):
            data["model"] = resolve_model(data["model"])
        found = zero_alias(data.get("zero_stage"))
        if found is not None:
            data["zero_stage"], sharding = found
            if sharding is not None:
                data.setdefault("sharding", sharding)
        for name in _METHOD_AWARE:
            data.setdefault(name, default_for(name, data.get("method")))
        return data

    @field_validator("attention", mode="before")
    @classmethod
    def _attention_alias(cls, value: Any) -> Any:
        return attention_alias(value)

    @field_validator("lora_targets", mode="before")
    @classmethod
    def _targets_tuple(cls, value: Any) -> Any:
        if isinstance(value, str) and "," in value:
            return tuple(v.strip() for v in value.split(",") if v.strip())
        return tuple(value) if isinstance(value, list) else value

    @model_validator(mode="after")
    def _check_combination(self) -> EstimateInput:
        _check_method_fields(self)
        _check_parallelism(self)
        if self.lora_rank > self.model.hidden_size:
            raise InvalidInputError(
                "lora_rank", self.lora_rank, _VALID["lora_rank"] + f" ({self.model.hidden_size})"
            )
        if self.method in LORA_METHODS:
            resolve_targets(self.model, self.lora_targets)
        versions = stack_versions(self.stack)
        if self.stack_version not in ("current", *versions):
            raise InvalidInputError(
                "stack_version", self.stack_version,
                f"current or a release of {self.stack}: {', '.join(versions)}",
            )  # fmt: skip
        return self

    @property
    def mechanisms(self) -> Mechanisms:
        """Every mechanism of the job's stack: the job's values, the profile's for the rest."""
        job = JobContext(self.method, self.num_gpus, self.sharding, self.zero_stage,
                         self.precision)  # fmt: skip
        return mechanisms_for(self.stack, self.stack_version, job, _MECHANISM_VALUES(self))

    @property
    def stack_model(self) -> ModelArch:
        """The model as the stack builds it: litgpt's GPT fuses q, k and v into one linear layer
        (litgpt/model.py CausalSelfAttention.attn), which LoRA adapts as one module."""
        if self.stack == "litgpt" and not self.model.is_mla:
            return self.model.model_copy(update={"fused_qkv": True})
        return self.model

    @property
    def effective_lora_alpha(self) -> float:
        """lora_alpha, defaulting to 2 x rank."""
        return self.lora_alpha if self.lora_alpha is not None else 2.0 * self.lora_rank

    @property
    def effective_engine(self) -> ResolvedEngine:
        """engine, defaulting to DeepSpeed's accounting under ZeRO and to PyTorch otherwise."""
        if self.engine != "auto":
            return self.engine
        return "deepspeed" if self.zero_stage > 0 or self.offload_optimizer else "pytorch"

    @property
    def effective_optimizer_impl(self) -> ResolvedOptimizerImpl:
        """optimizer_impl, defaulting to fused (DeepSpeed) or PyTorch's per-device default."""
        if self.optimizer_impl != "auto":
            return self.optimizer_impl
        if self.effective_engine == "deepspeed":
            return "fused"
        return "foreach" if self.device == "cuda" else "for-loop"

    @property
    def effective_context_bytes(self) -> int:
        """The CUDA context: none on the CPU."""
        return self.cuda_context_bytes if self.device == "cuda" else 0

    @property
    def effective_fragmentation(self) -> float:
        """The allocator margin; 0 on the CPU unless given."""
        if self.device == "cpu" and "fragmentation" not in self.model_fields_set:
            return 0.0
        return self.fragmentation

    @property
    def effective_dropout(self) -> bool:
        """dropout, defaulting by model family."""
        return self.dropout if self.dropout is not None else self.model.family in DROPOUT_FAMILIES


def _check_method_fields(inp: EstimateInput) -> None:
    if inp.method == "qlora" and inp.precision == "fp32":
        raise InvalidInputError(
            "precision",
            inp.precision,
            "bf16-mixed, fp16-mixed or bf16 with method qlora (the 4-bit base computes in 16-bit)",
        )
    if inp.method in ("pretrain", "full"):
        given = [n for n in _LORA_FIELDS if n in inp.model_fields_set]
        given += [n for n in (*_QLORA_FIELDS, "frozen_base_dtype") if getattr(inp, n) is not None]
        for name in given:
            raise InvalidInputError(
                name, getattr(inp, name), f"only with method lora or qlora, not {inp.method}"
            )
    for name in _QLORA_FIELDS:
        if inp.method == "lora" and getattr(inp, name) is not None:
            raise InvalidInputError(name, getattr(inp, name), "only with method qlora")


def _check_parallelism(inp: EstimateInput) -> None:
    if inp.offload_optimizer and inp.zero_stage == 0:
        raise InvalidInputError(
            "offload_optimizer",
            True,
            "only with zero_stage 1, 2 or 3 (DeepSpeed offloads under ZeRO)",
        )
    if inp.offload_optimizer and inp.optimizer in ("adamw-8bit", "paged-adamw-8bit"):
        raise InvalidInputError(
            "optimizer",
            inp.optimizer,
            "adamw, adafactor, sgd, sgd-momentum or lion with "
            "offload_optimizer (bitsandbytes state lives on the GPU)",
        )
    if inp.offload_params and inp.zero_stage < 3:
        raise InvalidInputError(
            "offload_params", True, "only with zero_stage 3 (ZeRO-3 or FSDP shards the weights)"
        )
    heads = inp.model.num_heads
    if heads % inp.tensor_parallel:
        divisors = [d for d in range(1, heads + 1) if heads % d == 0]
        raise InvalidInputError(
            "tensor_parallel",
            inp.tensor_parallel,
            f"a divisor of the {heads} attention heads: {divisors}",
        )
