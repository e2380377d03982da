"""Seconds per token on one GPU: matmuls, attention and memory-bound kernels, each at its rate.

A token's work on one GPU (before tensor and pipeline parallelism divide it) is
    matmul FLOPs / (peak x GEMM efficiency)            block linears, LM head, LoRA adapters
  + attention FLOPs / (16-bit peak x attention efficiency)
  + memory-bound bytes / (HBM bandwidth x its efficiency)   norms, rotary, residuals, loss ...
Each term has its own efficiency by GPU architecture (`ThroughputAssumptions`): a recomputed
forward is charged as the kernels it reruns, not at a whole-step utilisation. Under fp8 the
block linears run at the FP8 peak and their inputs and output gradients are cast (memory-bound);
the LM head, attention and everything else stay 16-bit (torchao's and Transformer Engine's
recipes leave them in high precision).

Units: FLOPs, bytes and seconds per token; peaks in TFLOPS (1e12/s); bandwidth GB/s (1e9 B/s).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tools.architectures.architecture import ModelArch
from tools.enums import Checkpointing, Precision
from tools.errors import InvalidInputError
from tools.gpus import GPUSpec
from tools.memory.states.inventory import PhysicalLinear
from tools.ranking.time.assumptions import ThroughputAssumptions
from tools.ranking.time.flops import TokenFlops

# Which GPUSpec peak serves which training precision, in order of preference. GPUs without BF16
# tensor cores (V100, T4) train in FP16 mixed precision; FP32 training runs on TF32 tensor
# cores; fp8 needs FP8 tensor cores (Hopper, Ada, Blackwell, CDNA 3).
_PEAK_FIELDS: dict[str, tuple[str, ...]] = {
    "bf16": ("bf16_tflops", "fp16_tflops"),
    "bf16-mixed": ("bf16_tflops", "fp16_tflops"),
    "fp16": ("fp16_tflops",),
    "fp16-mixed": ("fp16_tflops",),
    "fp32": ("tf32_tflops",),
    "tf32": ("tf32_tflops",),
    "fp8": ("fp8_tflops",),
}
_FORWARD_SHARE = 1.0 / 3.0  # forward share of a layer's forward + backward traffic
TERA = 1e12
GIGA = 1e9


def peak_tflops(gpu: GPUSpec, precision: str) -> tuple[float, str] | None:
    """Dense tensor peak of `gpu` for training in `precision`, with the figure's name.

    None when the datasheet gives no usable figure (FP32 training on a V100, which has no TF32
    tensor cores; fp8 on a GPU without FP8 tensor cores).
    """
    fields = _PEAK_FIELDS.get(precision)
    if fields is None:
        raise InvalidInputError("precision", precision, ", ".join(sorted(_PEAK_FIELDS)))
    for field in fields:
        value = getattr(gpu, field)
        if value is not None:
            return float(value), field.removesuffix("_tflops").upper()
    return None


def sixteen_bit_peak(gpu: GPUSpec, precision: str) -> float:
    """The peak the 16-bit kernels of a run use: TF32 for fp32 runs, else BF16 (FP16 without
    BF16 cores); raises when there is none (callers check `peak_tflops` first)."""
    found = peak_tflops(gpu, "fp32" if precision == "fp32" else "bf16")
    if found is None:
        raise InvalidInputError("precision", precision, f"a precision {gpu.id} has a peak for")
    return found[0]


@dataclass(frozen=True, slots=True)
class TokenTimes:
    """Seconds per token on one GPU doing the whole model (tensor and pipeline parallelism
    divide these), by kernel kind; `recompute` is the part spent recomputing (included)."""

    matmul: float
    attention: float
    memory: float
    recompute: float

    @property
    def total(self) -> float:
        return self.matmul + self.attention + self.memory


def memory_bound_bytes(
    model: ModelArch,
    checkpointing: Checkpointing,
    precision: Precision,
    targets: Sequence[PhysicalLinear],
    assumptions: ThroughputAssumptions,
) -> tuple[float, float]:
    """(bytes per token through memory-bound kernels, the recomputed part of them).

    Layers: `memory_bound_bytes_per_hidden` x h each, plus a forward's share again under full
    recomputation; the loss: `loss_bytes_per_vocab` x V; LoRA: `lora_bytes_per_width` per unit of
    each adapted layer's input + output width; fp8: each block linear's input and output cast.
    """
    a = assumptions
    layers = model.num_layers + model.num_decoder_layers
    per_layer = a.memory_bound_bytes_per_hidden * model.hidden_size
    lora = a.lora_bytes_per_width * sum(t.count * (t.d_in + t.d_out) for t in targets)
    casts = 0.0
    if precision == "fp8":
        widths = sum(m.count * (m.d_in + m.d_out) for m in model.linear_modules())
        casts = a.fp8_cast_bytes * widths
    body = per_layer * layers + lora + casts
    recompute = body * _FORWARD_SHARE if checkpointing == "full" else 0.0
    loss = a.loss_bytes_per_vocab * model.vocab_size
    return body + recompute + loss, recompute


def token_times(
    flops: TokenFlops,
    memory_bytes: tuple[float, float],
    gpu: GPUSpec,
    precision: Precision,
    assumptions: ThroughputAssumptions,
) -> TokenTimes:
    """Seconds per token on `gpu` for `flops` and `memory_bytes` (from `memory_bound_bytes`)."""
    arch, a = gpu.architecture, assumptions
    peak16 = sixteen_bit_peak(gpu, precision) * TERA
    rate16 = peak16 * a.gemm(arch)
    if precision == "fp8":
        fp8 = peak_tflops(gpu, "fp8")
        if fp8 is None:
            raise InvalidInputError("precision", precision, f"a precision {gpu.id} supports")
        block_rate = fp8[0] * TERA * a.gemm_fp8(arch)
    else:
        block_rate = rate16
    attn_rate = peak16 * a.attention(arch)
    bandwidth = gpu.memory_bandwidth_gbs * GIGA * a.hbm_efficiency
    matmul = flops.block_linear / block_rate + (flops.head + flops.adapters) / rate16
    attention = flops.attention / attn_rate
    memory, memory_again = memory_bytes
    recompute = flops.recompute_matmul / block_rate + flops.recompute_attention / attn_rate
    return TokenTimes(
        matmul=matmul,
        attention=attention,
        memory=memory / bandwidth,
        recompute=recompute + memory_again / bandwidth,
    )
