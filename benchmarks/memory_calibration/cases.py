"""The calibration cases: which model, which training setup, which shapes.

A case is plain data (pydantic); `build` and `measure` turn it into a real training step. The
`quick` subset is what the regression test runs; `full` is every CPU case; `gpu` is the CUDA
list (larger shapes, QLoRA).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

ModelKey = Literal[
    "gpt2", "gpt2-2l", "bert", "llama", "qwen2", "mixtral", "llama-v512", "llama-1b", "qwen2-0.5b"
]
Subset = Literal["quick", "full", "gpu"]


class Case(BaseModel):
    """One training configuration to measure."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: ModelKey = Field(description="key into build.MODELS")
    method: Literal["full", "lora", "qlora"] = "full"
    precision: Literal["fp32", "bf16-mixed", "bf16"] = "fp32"
    optimizer: Literal["adamw", "sgd", "adafactor"] = "adamw"
    lora_rank: int = Field(default=8, gt=0, description="LoRA rank (ignored for full)")
    lora_targets: Literal["attention", "all-linear"] = "all-linear"
    batch: int = Field(default=2, gt=0, description="micro-batch size, sequences")
    seq_len: int = Field(default=128, gt=0, description="tokens per sequence")
    checkpointing: Literal["none", "full"] = "none"
    attention: Literal["sdpa", "eager"] = "sdpa"
    device: Literal["cpu", "cuda"] = "cpu"

    @property
    def id(self) -> str:
        """A readable unique name, e.g. 'gpt2-2l/full/fp32/adamw/b2s128/sdpa'."""
        parts: list[str] = [self.model, self.method]
        if self.method != "full":
            parts.append(f"r{self.lora_rank}-{self.lora_targets}")
        parts += [self.precision, self.optimizer, f"b{self.batch}s{self.seq_len}", self.attention]
        if self.checkpointing != "none":
            parts.append("ckpt")
        if self.device != "cpu":
            parts.append(self.device)
        return "/".join(parts)


def _c(model: ModelKey, **fields: object) -> Case:
    return Case.model_validate({"model": model, **fields})


# Small enough for the regression test: each one runs in a few seconds on two CPU cores.
QUICK: tuple[Case, ...] = (
    _c("gpt2-2l"),
    _c("gpt2-2l", precision="bf16-mixed"),
    _c("llama", method="lora", lora_rank=8, lora_targets="attention"),
    _c("mixtral", optimizer="sgd", checkpointing="full"),
)

_FULL_EXTRA: tuple[Case, ...] = (
    # GPT-2 small, all 12 layers: optimizers, precisions, checkpointing, attention kernels.
    _c("gpt2"),
    _c("gpt2", optimizer="sgd"),
    _c("gpt2", optimizer="adafactor"),
    _c("gpt2", precision="bf16-mixed"),
    _c("gpt2", precision="bf16"),
    _c("gpt2", checkpointing="full", batch=4, seq_len=256),
    _c("gpt2", attention="eager", batch=4, seq_len=256),
    _c("gpt2", batch=8, seq_len=256),
    _c("gpt2", method="lora", lora_rank=8, lora_targets="attention", batch=4, seq_len=256),
    _c("gpt2", method="lora", lora_rank=64, lora_targets="all-linear", batch=4, seq_len=256),
    _c("gpt2-2l", batch=1, seq_len=512),
    _c("gpt2-2l", attention="eager", batch=1, seq_len=512),
    # BERT base (masked-LM head over every position), 12 layers.
    _c("bert"),
    _c("bert", precision="bf16-mixed", batch=4, seq_len=256),
    _c("bert", attention="eager", batch=4, seq_len=256),
    _c("bert", method="lora", lora_rank=8, lora_targets="attention", batch=4, seq_len=256),
    # Llama architecture (untied, SwiGLU, RMSNorm, rotary), scaled down.
    _c("llama"),
    _c("llama", optimizer="adafactor", batch=4, seq_len=256),
    _c("llama", precision="bf16-mixed", batch=4, seq_len=256),
    _c("llama", precision="bf16", batch=4, seq_len=256),
    _c("llama", checkpointing="full", batch=4, seq_len=256),
    _c("llama", attention="eager", batch=4, seq_len=256),
    _c("llama", method="lora", lora_rank=64, lora_targets="all-linear", batch=4, seq_len=256),
    _c(
        "llama",
        method="lora",
        lora_rank=8,
        lora_targets="all-linear",
        precision="bf16-mixed",
        batch=4,
        seq_len=256,
    ),
    _c("llama", method="lora", lora_rank=8, checkpointing="full", batch=8, seq_len=256),
    # QLoRA: bitsandbytes (>= 0.48) has CPU kernels for NF4; needs `pip install bitsandbytes`.
    _c("llama", method="qlora", precision="bf16", lora_rank=8),
    _c(
        "llama",
        method="qlora",
        precision="bf16-mixed",
        lora_rank=64,
        batch=4,
        seq_len=256,
        checkpointing="full",
    ),
    # Qwen2 architecture (GQA, q/k/v biases, tied 152k vocabulary): real widths, two layers.
    _c("qwen2", batch=1),
    _c("qwen2", method="lora", lora_rank=8, lora_targets="attention", batch=4, seq_len=256),
    _c(
        "qwen2",
        method="lora",
        lora_rank=64,
        lora_targets="all-linear",
        precision="bf16-mixed",
        batch=4,
        seq_len=256,
    ),
    _c("qwen2", method="lora", lora_rank=8, precision="bf16", batch=4, seq_len=256),
    _c("qwen2", attention="eager", method="lora", lora_rank=8, batch=4, seq_len=256),
    # Mixtral-style mixture of experts (8 experts, top-2), scaled down.
    _c("mixtral"),
    _c("mixtral", precision="bf16-mixed", batch=4, seq_len=256),
    _c("mixtral", optimizer="adafactor", batch=4, seq_len=256),
    _c("mixtral", method="lora", lora_rank=8, lora_targets="attention", batch=4, seq_len=256),
    # A 512-token vocabulary and 4096-token micro-batches: the peak is a layer being rebuilt
    # and differentiated, with its activation gradients, not the loss.
    _c("llama-v512", checkpointing="full", batch=4, seq_len=1024),
    _c("llama-v512", precision="bf16", checkpointing="full", batch=4, seq_len=1024),
    _c(
        "llama-v512",
        method="lora",
        lora_rank=16,
        precision="bf16-mixed",
        checkpointing="full",
        batch=4,
        seq_len=1024,
    ),
    _c("llama-v512", method="lora", lora_rank=16, precision="bf16", batch=4, seq_len=1024),
)

# CUDA: real widths and depths that still run in seconds on one data-centre GPU, plus QLoRA.
GPU: tuple[Case, ...] = tuple(
    _c(device="cuda", **fields)  # type: ignore[arg-type]
    for fields in (
        {"model": "gpt2", "batch": 8, "seq_len": 1024},
        {"model": "gpt2", "precision": "bf16-mixed", "batch": 8, "seq_len": 1024},
        {"model": "llama-1b", "precision": "bf16-mixed", "batch": 4, "seq_len": 1024},
        {
            "model": "llama-1b",
            "precision": "bf16-mixed",
            "batch": 8,
            "seq_len": 2048,
            "checkpointing": "full",
        },
        {"model": "llama-1b", "precision": "bf16", "batch": 4, "seq_len": 1024},
        {
            "model": "llama-1b",
            "method": "lora",
            "lora_rank": 16,
            "precision": "bf16",
            "batch": 4,
            "seq_len": 1024,
        },
        {
            "model": "llama-1b",
            "method": "qlora",
            "lora_rank": 16,
            "precision": "bf16",
            "batch": 4,
            "seq_len": 1024,
        },
        {"model": "qwen2-0.5b", "precision": "bf16-mixed", "batch": 8, "seq_len": 1024},
        {
            "model": "qwen2-0.5b",
            "method": "qlora",
            "lora_rank": 64,
            "precision": "bf16",
            "batch": 8,
            "seq_len": 1024,
            "checkpointing": "full",
        },
        {"model": "mixtral", "precision": "bf16-mixed", "batch": 8, "seq_len": 1024},
    )
)


def cases(subset: Subset) -> tuple[Case, ...]:
    """The cases of a subset: quick (regression test), full (all CPU cases) or gpu."""
    if subset == "quick":
        return QUICK
    if subset == "full":
        return QUICK + _FULL_EXTRA
    return GPU
