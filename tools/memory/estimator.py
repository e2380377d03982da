"""Training-memory estimator: bytes per GPU to train or fine-tune a transformer.

`estimate(EstimateInput(...)) -> MemoryEstimate` is pure and deterministic. It counts weights,
gradients and optimizer state as the ZeRO paper does (with sharding, tensor parallelism and CPU
offload), activations tensor by tensor as Korthikanti et al. 2022 do (adapted to GQA, gated and
MoE MLPs, fused attention, recomputation and LoRA), the logits/loss buffers, and a stated
overhead. Every default and modelling choice used for a call is returned in `assumptions`.
All sizes are integer bytes; `tools.units` converts them for display.
"""

from __future__ import annotations

from math import ceil
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from tools.architectures.architecture import ModelArch
from tools.errors import InvalidInputError
from tools.memory import constants as c
from tools.memory.activations import DROPOUT_FAMILIES, compute_activations
from tools.memory.assemble import (
    activation_config,
    activations_detail,
    bytes_per_param,
    states_config,
    step_inputs,
)
from tools.memory.assumptions import describe
from tools.memory.calibration import calibration_band
from tools.memory.inventory import PhysicalLinear, resolve_targets
from tools.memory.model_states import compute_model_states
from tools.memory.optimizer_step import OptimizerImpl
from tools.memory.peak import peak_moment, step_moments
from tools.memory.results import (
    MemoryBreakdown,
    MemoryEstimate,
    ModelStatesDetail,
    MomentBytes,
    OverheadDetail,
)

__all__ = ["EstimateInput", "MemoryBreakdown", "MemoryEstimate", "estimate", "estimate_for"]

_ZERO_ALIASES: dict[str, tuple[int, str]] = {
    "ddp": (0, "deepspeed"),
    "none": (0, "deepspeed"),
    "no-shard": (0, "deepspeed"),
    "zero0": (0, "deepspeed"),
    "zero1": (1, "deepspeed"),
    "zero2": (2, "deepspeed"),
    "zero3": (3, "deepspeed"),
    "fsdp-shard-grad-op": (2, "fsdp"),
    "shard-grad-op": (2, "fsdp"),
    "fsdp-full-shard": (3, "fsdp"),
    "full-shard": (3, "fsdp"),
    "fsdp": (3, "fsdp"),
}
_ATTENTION_ALIASES = {
    "flash": "sdpa",
    "flash-attention": "sdpa",
    "flash-attention-2": "sdpa",
    "fa2": "sdpa",
    "spda": "sdpa",
}
_LORA_FIELDS = ("lora_rank", "lora_alpha", "lora_targets", "lora_dropout")
VALID_ZERO = "0, 1, 2, 3 or an alias: " + ", ".join(_ZERO_ALIASES)

# What is valid, per field, for error messages built from pydantic's constraint errors.
_VALID: dict[str, str] = {
    "micro_batch_size": f"an integer from 1 to {c.MAX_BATCH} (sequences per GPU per step)",
    "seq_len": f"an integer from 1 to {c.MAX_SEQ_LEN} (tokens)",
    "num_gpus": f"an integer from 1 to {c.MAX_GPUS} (data-parallel ranks)",
    "tensor_parallel": "an integer >= 1 that divides the number of attention heads",
    "lora_rank": "an integer from 1 to the model's hidden size",
    "lora_dropout": "a probability from 0 to below 1",
    "zero_stage": VALID_ZERO,
    "cuda_context_bytes": f"an integer from 0 to {c.MAX_CONTEXT_BYTES} (bytes)",
    "fragmentation": "a fraction from 0 to 1 of the allocated bytes",
    "gradient_accumulation_steps": f"an integer from 1 to {c.MAX_BATCH} (micro-batches per step)",
}


class EstimateInput(BaseModel):
    """One training setup. Sizes are per GPU; `num_gpus` is the data-parallel degree."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=False)

    model: ModelArch = Field(
        description="the architecture; a name, config.json path or count "
        "such as '7e9' is resolved through tools.architectures.registry"
    )
    method: c.Method = Field(
        "full",
        description="pretrain or full: all weights trainable; lora: "
        "frozen 16-bit base + adapters; qlora: frozen NF4 base + adapters",
    )
    precision: c.Precision = Field(
        "bf16-mixed",
        description="bf16/fp16-mixed: 16-bit weights, "
        "fp32 master in the optimizer; bf16: pure bf16; fp32",
    )
    optimizer: c.Optimizer = "adamw"
    lora_rank: int = Field(16, gt=0, description="LoRA rank r")
    lora_alpha: float | None = Field(
        None, gt=0, description="LoRA alpha; default 2 x rank; does not change memory"
    )
    lora_targets: str | tuple[str, ...] = Field(
        "all-linear", description="'all-linear', 'attention', 'mlp' or module names"
    )
    lora_dropout: float = Field(0.0, ge=0, lt=1, description="LoRA dropout probability")
    qlora_double_quant: bool = Field(True, description="QLoRA: quantize the NF4 block constants")
    micro_batch_size: int = Field(1, gt=0, le=c.MAX_BATCH, description="sequences per GPU per step")
    seq_len: int = Field(2048, gt=0, le=c.MAX_SEQ_LEN, description="tokens per sequence")
    gradient_checkpointing: Literal["none", "selective", "full"] = "none"
    attention: Literal["eager", "sdpa"] = Field(
        "sdpa", description="sdpa = fused kernels (PyTorch SDPA, FlashAttention): no s x s tensors"
    )
    dropout: bool | None = Field(
        None,
        description="dropout in attention/residuals; default: "
        "on for GPT-2, BERT and T5 families, off otherwise",
    )
    zero_stage: int = Field(
        0, ge=0, le=3, description="ZeRO stage 0-3 (FSDP shard-grad-op = 2, full-shard = 3)"
    )
    sharding: Literal["deepspeed", "fsdp"] = Field(
        "deepspeed", description="which ZeRO-3 implementation decides the gathered unit"
    )
    num_gpus: int = Field(1, gt=0, le=c.MAX_GPUS, description="data-parallel degree")
    tensor_parallel: int = Field(1, gt=0, description="tensor-parallel degree (Megatron-style)")
    sequence_parallel: bool = Field(False, description="Megatron sequence parallelism with TP")
    offload_optimizer: bool = Field(False, description="optimizer state to CPU (needs ZeRO)")
    cuda_context_bytes: int = Field(
        c.DEFAULT_CUDA_CONTEXT_BYTES,
        ge=0,
        le=c.MAX_CONTEXT_BYTES,
        description="CUDA context + framework bytes per GPU",
    )
    fragmentation: float = Field(
        c.DEFAULT_FRAGMENTATION,
        ge=0,
        le=1,
        description="allocator margin, as a fraction of allocated bytes",
    )
    engine: Literal["auto", "pytorch", "deepspeed"] = Field(
        "auto",
        description="pytorch: torch.autocast over fp32 weights (Hugging Face Trainer bf16=True): "
        "4-byte weights and gradients, no separate master; deepspeed: a 16-bit model with the "
        "fp32 master in the optimizer (ZeRO accounting); auto: deepspeed under ZeRO stage >= 1 "
        "or offload, else pytorch",
    )
    device: Literal["cuda", "cpu"] = Field(
        "cuda",
        description="cuda; cpu models PyTorch's CPU kernels (no CUDA context; used to calibrate "
        "against exact CPU measurements)",
    )
    optimizer_impl: Literal["auto", "foreach", "for-loop", "fused"] = Field(
        "auto",
        description="how the optimizer step runs: auto = fused under deepspeed, else PyTorch's "
        "default (foreach on CUDA, for-loop on the CPU)",
    )
    gradient_accumulation_steps: int = Field(
        1, gt=0, le=c.MAX_BATCH, description="micro-batches per optimizer step"
    )

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise _as_invalid_input(exc) from None

    @model_validator(mode="before")
    @classmethod
    def _aliases(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        if isinstance(data.get("model"), str):
            from tools.architectures.registry import resolve_model  # deferred: reads the registry

            data["model"] = resolve_model(data["model"])
        stage = data.get("zero_stage")
        if isinstance(stage, str) and not stage.strip().isdigit():
            key = stage.strip().lower().replace("_", "-").replace(" ", "-")
            if key not in _ZERO_ALIASES:
                raise InvalidInputError("zero_stage", stage, VALID_ZERO)
            data["zero_stage"], engine = _ZERO_ALIASES[key]
            data.setdefault("sharding", engine)
        return data

    @field_validator("attention", mode="before")
    @classmethod
    def _attention_alias(cls, value: Any) -> Any:
        if isinstance(value, str):
            key = value.strip().lower().replace("_", "-")
            return _ATTENTION_ALIASES.get(key, key)
        return value

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
        if self.method in ("lora", "qlora"):
            resolve_targets(self.model, self.lora_targets)
        return self

    @property
    def effective_lora_alpha(self) -> float:
        """lora_alpha, defaulting to 2 x rank."""
        return self.lora_alpha if self.lora_alpha is not None else 2.0 * self.lora_rank

    @property
    def effective_engine(self) -> Literal["pytorch", "deepspeed"]:
        """engine, defaulting to DeepSpeed's accounting under ZeRO and to PyTorch otherwise."""
        if self.engine != "auto":
            return self.engine
        return "deepspeed" if self.zero_stage > 0 or self.offload_optimizer else "pytorch"

    @property
    def effective_optimizer_impl(self) -> OptimizerImpl:
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
        for name in (*_LORA_FIELDS, "qlora_double_quant"):
            if name in inp.model_fields_set:
                raise InvalidInputError(
                    name, getattr(inp, name), f"only with method lora or qlora, not {inp.method}"
                )
    if inp.method == "lora" and "qlora_double_quant" in inp.model_fields_set:
        raise InvalidInputError(
            "qlora_double_quant", inp.qlora_double_quant, "only with method qlora"
        )


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
    heads = inp.model.num_heads
    if heads % inp.tensor_parallel:
        divisors = [d for d in range(1, heads + 1) if heads % d == 0]
        raise InvalidInputError(
            "tensor_parallel",
            inp.tensor_parallel,
            f"a divisor of the {heads} attention heads: {divisors}",
        )


def _as_invalid_input(exc: ValidationError) -> InvalidInputError:
    """The first error of a failed validation, as an InvalidInputError naming what is valid."""
    err = exc.errors()[0]
    original = (err.get("ctx") or {}).get("error")
    if isinstance(original, InvalidInputError):
        return original
    field = ".".join(str(p) for p in err["loc"]) or "input"
    valid = _VALID.get(field, str(err["msg"]))
    return InvalidInputError(field, err.get("input"), valid)


def estimate(inp: EstimateInput) -> MemoryEstimate:
    """Peak training memory per GPU for `inp`; pure and deterministic.

    `per_gpu` is what is live at the step's largest moment (see tools.memory.peak) plus the
    overhead; every moment is listed in `moments`.
    """
    targets: tuple[PhysicalLinear, ...] = ()
    if inp.method in ("lora", "qlora"):
        targets = resolve_targets(inp.model, inp.lora_targets)
    states = compute_model_states(inp.model, states_config(inp, targets))
    acts = compute_activations(activation_config(inp, targets))
    moments = step_moments(acts, step_inputs(inp, states, acts))
    peak = peak_moment(moments)
    allocated = peak.total
    fragmentation = ceil(inp.effective_fragmentation * (allocated + states.comm_buffers))
    overhead = inp.effective_context_bytes + states.comm_buffers + fragmentation
    band = calibration_band()
    return MemoryEstimate(
        model_id=inp.model.id,
        model_name=inp.model.name,
        per_gpu=MemoryBreakdown(
            weights=peak.weights,
            gradients=peak.gradients,
            optimizer=peak.optimizer,
            activations=peak.activations,
            overhead=overhead,
            total=allocated + overhead,
        ),
        cpu_offload_bytes=states.cpu_offload,
        total_params=states.total_params,
        trainable_params=states.trainable_params,
        data_parallel=inp.num_gpus,
        tensor_parallel=inp.tensor_parallel,
        total_gpus=inp.num_gpus * inp.tensor_parallel,
        bytes_per_param=bytes_per_param(inp, states),
        model_states=ModelStatesDetail(
            unsharded_weights=states.unsharded_weights,
            unsharded_gradients=states.unsharded_gradients,
            unsharded_optimizer=states.unsharded_optimizer,
            zero3_gathered_weights=states.gathered_weights,
            zero3_gathered_gradients=states.gathered_gradients,
            qlora_dequant_buffer=states.dequant_buffer,
            optimizer_step_temporaries=states.step_temporaries,
        ),
        activations=activations_detail(acts),
        overhead=OverheadDetail(
            cuda_context=inp.effective_context_bytes,
            comm_buffers=states.comm_buffers,
            fragmentation=fragmentation,
        ),
        peak_moment=peak.name,
        moments=[
            MomentBytes(
                name=m.name,
                weights=m.weights,
                gradients=m.gradients,
                optimizer=m.optimizer,
                activations=m.activations,
                total=m.total,
            )
            for m in moments
        ],
        uncertainty=band.band if band else None,
        assumptions=describe(inp, states, targets, peak.name, band),
        engine=inp.effective_engine,
        optimizer_impl=inp.effective_optimizer_impl,
    )


def estimate_for(model: str | ModelArch, **settings: Any) -> MemoryEstimate:
    """Convenience: `estimate_for("llama 3.1 8b", method="lora")`; a string model is resolved
    by name, config.json path or parameter count."""
    return estimate(EstimateInput(model=model, **settings))
