"""How long a training run takes on a given cluster: training FLOPs, peak TFLOPS and an MFU model.

Units: FLOPs are floating-point operations (not per second); TFLOPS are 1e12 per second; time is
in hours; bandwidth in GB/s (1e9 bytes per second).

Training FLOPs (N = parameters used per token: all of them for dense models, the active ones for
mixture-of-experts; T = tokens processed):
- full fine-tune / pretraining: 6 N T (forward 2 N T, backward 4 N T: input and weight gradients);
- LoRA / QLoRA: 4 N T for the frozen base (forward + input gradients; no weight gradients) plus
  6 P T for the P trainable adapter parameters;
- full gradient checkpointing recomputes the forward once more: +2 N T (and +2 P T).
QLoRA also de-quantizes every frozen 4-bit weight to 16 bits on each pass, a memory-bound cost we
add as time (see `qlora_dequant_hours`), not as FLOPs.

Speed = GPUs x dense peak TFLOPS x model-FLOPs utilisation (MFU). The MFU model starts from a
single-node figure and multiplies in stated penalties; every number is a field of
`ThroughputAssumptions` so a request can override it.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from tools.enums import Interconnect, Method, Network
from tools.errors import InvalidInputError
from tools.gpus import GPUSpec

SECONDS_PER_HOUR = 3600.0
FULL_FLOPS_PER_PARAM_TOKEN = 6.0  # forward 2 + backward 4 (Kaplan et al. 2020, "Scaling Laws", 2.1)
FROZEN_FLOPS_PER_PARAM_TOKEN = 4.0  # forward 2 + input gradients 2; no weight gradients
RECOMPUTE_FLOPS_PER_PARAM_TOKEN = 2.0  # one more forward under full activation checkpointing

# Which GPUSpec peak serves which training precision, in order of preference. GPUs without BF16
# tensor cores (V100, T4) train in FP16 mixed precision; FP32 training runs on TF32 tensor cores.
# Keys are the estimator's precisions ("bf16-mixed", "fp16-mixed", "bf16", "fp32") and short forms.
_PEAK_FIELDS: dict[str, tuple[str, ...]] = {
    "bf16": ("bf16_tflops", "fp16_tflops"),
    "bf16-mixed": ("bf16_tflops", "fp16_tflops"),
    "fp16": ("fp16_tflops",),
    "fp16-mixed": ("fp16_tflops",),
    "fp32": ("tf32_tflops",),
    "tf32": ("tf32_tflops",),
}


class ThroughputAssumptions(BaseModel):
    """The MFU model and the QLoRA de-quantization cost. Defaults are stated assumptions."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mfu_single_node: float = Field(
        default=0.40,
        gt=0,
        le=1,
        description="MFU of one GPU or one NVLink/NVSwitch node; large runs report 0.38-0.46"
        " (Llama 3 paper, Dubey et al. 2024, Table 4: 38-43% BF16; PaLM, Chowdhery et al."
        " 2022: 46.2%)",
    )
    pcie_multi_gpu_factor: float = Field(
        default=0.75, gt=0, le=1, description="MFU multiplier when several GPUs talk over PCIe only"
    )
    infiniband_factor: float = Field(
        default=0.90, gt=0, le=1, description="MFU multiplier for multi-node over InfiniBand"
    )
    roce_factor: float = Field(
        default=0.85, gt=0, le=1, description="MFU multiplier for multi-node over RoCE"
    )
    ethernet_factor: float = Field(
        default=0.60, gt=0, le=1, description="MFU multiplier for multi-node over plain Ethernet"
    )
    fast_ethernet_gbps: float = Field(
        default=800.0,
        gt=0,
        description="Ethernet at or above this many Gbit/s per node counts as RoCE-class: such"
        " fabrics are RDMA-capable (AWS EFA, GCP GPUDirect-TCPX/RDMA)",
    )
    offload_factor: float = Field(
        default=0.50,
        gt=0,
        le=1,
        description="MFU multiplier with the optimizer offloaded to CPU (CPU Adam, PCIe copies)",
    )
    mfu_override: float | None = Field(
        default=None, gt=0, le=1, description="use this MFU for every cluster, ignoring the model"
    )
    qlora_dequant_bytes_per_param: float = Field(
        default=5.0,
        ge=0,
        description="effective memory traffic per frozen parameter per pass for QLoRA"
        " de-quantization, bytes at peak bandwidth: ~2.5 B moved (read 4-bit weight and scales,"
        " write 16-bit) at ~50% of peak bandwidth",
    )


class ClusterShape(BaseModel):
    """What the MFU model needs to know about a cluster."""

    model_config = ConfigDict(frozen=True)

    gpus_per_node: int = Field(ge=1)
    nodes: int = Field(ge=1)
    interconnect: Interconnect
    network: Network
    network_gbps: float | None = Field(default=None, description="inter-node Gbit/s per node")
    offload: bool = Field(description="optimizer states offloaded to CPU")

    @property
    def gpu_count(self) -> int:
        return self.gpus_per_node * self.nodes


def training_flops(
    method: Method,
    params_per_token: float,
    trainable_params: float,
    tokens: float,
    recompute_forward: bool,
) -> float:
    """Training FLOPs for `tokens` tokens (see the module docstring for the formulas).

    params_per_token: N, the model's parameters used per token (MoE: active parameters).
    trainable_params: P, the adapter parameters for LoRA/QLoRA (ignored for full/pretrain).
    """
    extra = RECOMPUTE_FLOPS_PER_PARAM_TOKEN if recompute_forward else 0.0
    if method in ("full", "pretrain"):
        return (FULL_FLOPS_PER_PARAM_TOKEN + extra) * params_per_token * tokens
    frozen = (FROZEN_FLOPS_PER_PARAM_TOKEN + extra) * params_per_token
    adapters = (FULL_FLOPS_PER_PARAM_TOKEN + extra) * trainable_params
    return (frozen + adapters) * tokens


def peak_tflops(gpu: GPUSpec, precision: str) -> tuple[float, str] | None:
    """Dense tensor peak of `gpu` for training in `precision`, with the figure's name.

    Returns None when the datasheet gives no usable figure (e.g. FP32 training on a V100, which
    has no TF32 tensor cores).
    """
    fields = _PEAK_FIELDS.get(precision)
    if fields is None:
        raise InvalidInputError("precision", precision, ", ".join(sorted(_PEAK_FIELDS)))
    for field in fields:
        value = getattr(gpu, field)
        if value is not None:
            return float(value), field.removesuffix("_tflops").upper()
    return None


def cluster_mfu(shape: ClusterShape, assumptions: ThroughputAssumptions) -> tuple[float, list[str]]:
    """Model-FLOPs utilisation for a cluster shape, and the penalties applied (in words)."""
    if assumptions.mfu_override is not None:
        return assumptions.mfu_override, [f"MFU {assumptions.mfu_override:.2f} (given)"]
    mfu = assumptions.mfu_single_node
    notes = [f"MFU {mfu:.2f} base"]
    if shape.gpus_per_node > 1 and shape.interconnect == "pcie":
        mfu *= assumptions.pcie_multi_gpu_factor
        notes.append(f"x{assumptions.pcie_multi_gpu_factor:.2f} PCIe-only GPUs")
    if shape.nodes > 1:
        factor, fabric = _network_factor(shape, assumptions)
        mfu *= factor
        notes.append(f"x{factor:.2f} multi-node {fabric}")
    if shape.offload:
        mfu *= assumptions.offload_factor
        notes.append(f"x{assumptions.offload_factor:.2f} CPU offload")
    return mfu, notes


def _network_factor(shape: ClusterShape, assumptions: ThroughputAssumptions) -> tuple[float, str]:
    if shape.network == "infiniband":
        return assumptions.infiniband_factor, "infiniband"
    if shape.network == "roce":
        return assumptions.roce_factor, "roce"
    if shape.network_gbps is not None and shape.network_gbps >= assumptions.fast_ethernet_gbps:
        return assumptions.roce_factor, f"ethernet {shape.network_gbps:g} Gbps (RoCE-class)"
    return assumptions.ethernet_factor, "ethernet"


def compute_hours(flops: float, gpu_count: int, peak: float, mfu: float) -> float:
    """Hours to do `flops` on `gpu_count` GPUs of `peak` dense TFLOPS each at utilisation `mfu`."""
    return flops / (gpu_count * peak * 1e12 * mfu) / SECONDS_PER_HOUR


def qlora_dequant_hours(
    frozen_params_per_gpu: float,
    tokens: float,
    gpu_count: int,
    tokens_per_micro_step: int,
    recompute_forward: bool,
    bandwidth_gbs: float,
    bytes_per_param: float,
) -> float:
    """Hours every GPU spends de-quantizing its 4-bit frozen weights (memory-bound).

    Each GPU runs tokens / (gpu_count x micro-batch tokens) micro-steps; each micro-step
    de-quantizes all its frozen weights once per pass: forward, backward, and the recomputed
    forward under full checkpointing.
    """
    passes = 3 if recompute_forward else 2
    micro_steps = tokens / (gpu_count * tokens_per_micro_step)
    traffic_bytes = micro_steps * passes * frozen_params_per_gpu * bytes_per_param
    return traffic_bytes / (bandwidth_gbs * 1e9) / SECONDS_PER_HOUR
