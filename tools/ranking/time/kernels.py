"""Seconds per token on one GPU: matmuls, attention and memory-bound kernels, each at its rate.

A token's work on one GPU (before tensor and pipeline parallelism divide it) is
    matmul FLOPs / (peak x GEMM efficiency at each GEMM's shape)   block linears, LM head, LoRA
  + attention FLOPs / (16-bit peak x attention efficiency)
  + memory-bound bytes / (HBM bandwidth x its efficiency)   norms, rotary, activation, loss ...
Each term has its own efficiency (`ThroughputAssumptions`, from kernel benchmarks): a GEMM's
share falls with its smallest dimension (tokens of the micro-batch, or per expert for a
mixture of experts; the layer's widths), the attention kernel is FlashAttention-2 class unless
the stack runs FlashAttention-3 class kernels (Megatron's Transformer Engine on Hopper), and the
memory-bound bytes depend on how the stack runs its small kernels (`KernelChoices`: eager
PyTorch, torch.compile, or fused kernels). A recomputed forward is charged as the kernels it
reruns, not at a whole-step utilisation. Under fp8 the
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
from tools.memory.states.inventory import ROUTED_EXPERT_LINEARS, PhysicalLinear
from tools.ranking.time.assumptions import Fusion, ThroughputAssumptions
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
class KernelChoices:
    """How a stack runs the kernels that are not matmuls: the layers' small kernels and the
    loss (eager, compiled or fused) and whether attention is FlashAttention-3 class."""

    fusion: Fusion = "eager"
    loss_fusion: Fusion = "eager"
    fa3: bool = False


# Stacks whose layers run hand-written fused kernels: unsloth (Triton RMSNorm, RoPE, SwiGLU,
# LoRA: kernels/*.py), Megatron Core (Transformer Engine's fused norm-linear, activation and
# cuDNN attention).
_FUSED_STACKS = frozenset({"unsloth", "megatron"})
_FUSED_LOSSES = frozenset({"fused", "fused-linear", "forward-grad"})


def kernel_choices(stack: str, compile_on: bool, loss: str, compiled_loss: bool) -> KernelChoices:
    """The kernels a job's stack runs (its mechanisms: `compile`, the loss)."""
    fusion: Fusion = "fused" if stack in _FUSED_STACKS else "compiled" if compile_on else "eager"
    if loss in _FUSED_LOSSES:
        loss_fusion: Fusion = "fused"
    else:
        loss_fusion = "compiled" if compiled_loss else "eager"
    return KernelChoices(fusion, loss_fusion, fa3=stack == "megatron")


@dataclass(frozen=True, slots=True)
class GemmShapes:
    """What sets each matmul's efficiency: the blocks' GEMMs as (share of their FLOPs, smallest
    dimension), and the LM head's smallest dimension (0: no shape known, the largest share)."""

    block: tuple[tuple[float, float], ...] = ()
    head_smallest: float = 0.0


def routed_expert_params(model: ModelArch) -> int:
    """Parameters of the routed experts' linear layers (0 for a dense model)."""
    if not model.is_moe:
        return 0
    names = ROUTED_EXPERT_LINEARS
    return sum(m.d_in * m.d_out * m.count for m in model.linear_modules() if m.name in names)


def gemm_shapes(model: ModelArch, micro_tokens: int, expert_parallel: int = 1) -> GemmShapes:
    """The GEMM shapes of one micro-batch of `micro_tokens` tokens on one GPU (before tensor
    parallelism): each linear's (tokens, d_in, d_out); a routed expert sees its share of the
    tokens (tokens x experts per token / experts), from every rank of its expert-parallel group
    (x `expert_parallel`: the GPU holds that many fewer experts, each fed by as many ranks)."""
    weights: list[tuple[float, float]] = []
    for m in model.linear_modules():
        routed = model.is_moe and m.name in ROUTED_EXPERT_LINEARS
        share = model.experts_per_token / model.num_experts if routed else 1.0
        tokens = micro_tokens * share * (expert_parallel if routed else 1)
        weights.append((m.d_in * m.d_out * m.count * share, min(tokens, m.d_in, m.d_out)))
    total = sum(w for w, _ in weights) or 1.0
    head = min(micro_tokens, model.hidden_size, model.vocab_size)
    return GemmShapes(tuple((w / total, x) for w, x in weights), float(head))


def block_gemm_share(shapes: GemmShapes, gpu: GPUSpec, a: ThroughputAssumptions) -> float:
    """The blocks' GEMMs' share of the peak: their FLOPs over the time each takes at its own
    shape's share (a FLOP-weighted harmonic mean)."""
    if not shapes.block:
        return a.gemm(gpu.architecture, gpu.id)
    seconds = sum(w / a.gemm_at(gpu.architecture, gpu.id, x) for w, x in shapes.block)
    return 1.0 / seconds


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
    kernels: KernelChoices = KernelChoices(),
) -> tuple[float, float]:
    """(bytes per token through memory-bound kernels, the recomputed part of them).

    Per layer, at the stack's fusion: each norm's bytes per element x h, RoPE's per rotated
    query and key element, the MLP activation's per inner element (gated or GELU; the active
    experts' and shared expert's widths for a mixture of experts), the residual adds' per hidden
    element; a forward's share again under full recomputation; the loss: its bytes per
    vocabulary entry at the loss's fusion; LoRA: `lora_bytes_per_width` per unit of each adapted
    layer's input + output width; fp8: each block linear's input and output cast.
    """
    a, f = assumptions, kernels.fusion
    layers = model.num_layers + model.num_decoder_layers
    h = model.hidden_size
    norms = a.norm_bytes[f] * h * model.norms_per_layer
    rotary = 0.0
    if not model.learned_positions and not model.relative_attention_buckets:
        rotary = a.rope_bytes[f] * (model.q_dim + model.kv_dim)
    inner = model.intermediate_size * (model.experts_per_token if model.is_moe else 1)
    inner += model.shared_expert_intermediate_size
    act = (a.gated_act_bytes if model.gated_mlp else a.gelu_act_bytes)[f] * inner
    per_layer = norms + rotary + act + a.residual_bytes[f] * h
    lora = a.lora_bytes_per_width * sum(t.count * (t.d_in + t.d_out) for t in targets)
    casts = 0.0
    if precision == "fp8":
        widths = sum(m.count * (m.d_in + m.d_out) for m in model.linear_modules())
        casts = a.fp8_cast_bytes * widths
    body = per_layer * layers + lora + casts
    recompute = body * _FORWARD_SHARE if checkpointing == "full" else 0.0
    loss = a.loss_bytes[kernels.loss_fusion] * model.vocab_size
    return body + recompute + loss, recompute


def token_times(
    flops: TokenFlops,
    memory_bytes: tuple[float, float],
    gpu: GPUSpec,
    precision: Precision,
    assumptions: ThroughputAssumptions,
    shapes: GemmShapes = GemmShapes(),
    fa3: bool = False,
) -> TokenTimes:
    """Seconds per token on `gpu` for `flops` and `memory_bytes` (from `memory_bound_bytes`),
    each GEMM at its shape's share (`shapes`; none given: the largest share)."""
    arch, a = gpu.architecture, assumptions
    peak16 = sixteen_bit_peak(gpu, precision) * TERA
    block16 = peak16 * block_gemm_share(shapes, gpu, a)
    head_share = a.gemm(arch, gpu.id)
    if shapes.head_smallest:
        head_share = a.gemm_at(arch, gpu.id, shapes.head_smallest)
    rate16 = peak16 * head_share
    if precision == "fp8":
        fp8 = peak_tflops(gpu, "fp8")
        if fp8 is None:
            raise InvalidInputError("precision", precision, f"a precision {gpu.id} supports")
        shape_factor = block_gemm_share(shapes, gpu, a) / a.gemm(arch, gpu.id)
        block_rate = fp8[0] * TERA * a.gemm_fp8(arch) * shape_factor
    else:
        block_rate = block16
    attn_rate = peak16 * a.attention(arch, fa3)
    bandwidth = gpu.memory_bandwidth_gbs * GIGA * a.hbm_efficiency
    matmul = flops.block_linear / block_rate + flops.head / rate16 + flops.adapters / block16
    attention = (flops.attention + flops.attention_backward_extra) / attn_rate
    memory, memory_again = memory_bytes
    recompute = flops.recompute_matmul / block_rate + flops.recompute_attention / attn_rate
    return TokenTimes(
        matmul=matmul,
        attention=attention,
        memory=memory / bandwidth,
        recompute=recompute + memory_again / bandwidth,
    )
