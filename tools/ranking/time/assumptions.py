"""Every constant of the time model, with where it comes from; all overridable per request.

Units: efficiencies are fractions of a datasheet peak (dense tensor TFLOPS, HBM GB/s, link
GB/s); bytes are per token, per parameter or per element as each name says; times in seconds
unless a name says hours or minutes; bandwidth in GB/s (1e9 B/s) or Gbit/s where it says gbps.

Every figure comes from a kernel-level or microbenchmark measurement, a vendor maintainer's
statement of what a benchmark reaches, or a byte count read from the code, never from a
whole-training-run throughput of the kind the model is scored on (llm-foundry, torchtitan,
Megatron-LM, torchtune, litgpt, model-card rows). Where no such measurement was found the value
is marked "no measurement: assumed" and says what it borrows. A constant fitted to published
runs would be listed in tools/ranking/time/fitted.py; none is.

Sources (the note of 2026-12-07, docs/time_model_sources.md, gives each quote and its arithmetic):
- GEMMs: the XLA matmul cost table for sm_90 (tensorflow/tensorflow third_party/xla/xla/service/
  gpu/model/matmul_interpolator_data.h @372d578b: 0.73-0.82 of the H100 peak once every dimension
  is >= 2048, 0.38-0.42 at 256, 0.55-0.66 at 512, 0.69-0.75 at 1024), the maximum achievable
  matmul FLOPS table of stas00/ml-engineering compute/accelerator/README.md (H100 SXM 794.5 of
  989, A100 SXM 271.2 of 312, B200 1745 of 2250, MI300X 668.4 of 1300, Gaudi 3 1243 of 1677; FP8:
  H100 1402.6 of 1979, B200 3432.5 of 4500), bitsandbytes benchmarking/switchback/
  info_a100_py2.jsonl @59a7c3af (A100 fp16 training-shape GEMMs 0.73-0.82), chsasank/
  device-benchmarks README.md @02b8262e (RTX 4090 168 of 165.2, A10 56 of 125, V100 84 of 125),
  pytorch/ao pull request 3342 (H100 PCIe 433 of 756.5).
- Attention: Dao-AILab/flash-attention pull request 1791, benchmark_attn.py on Hopper, causal,
  head dim 128, 8192 tokens: FlashAttention-2 284 / 287 TFLOPS forward / backward, FlashAttention-3
  630 / 532; A100 FlashAttention-2 causal forward 156 TFLOPS (liangan1/GPU_travel performance/
  flash-attn/README.md), its backward not found: the Hopper and RTX 4090 backward-to-forward
  ratios bracket it; RTX 4090 151 / 99 TFLOPS (apache/tvm tl_doc/flash_perf.md).
- Memory-bound kernels: linkedin/Liger-Kernel benchmark/data/h100_all_benchmark_data.csv @3534d446
  and a100_all_benchmark_data.csv @bdbfeadf (eager transformers, torch.compile and Liger kernels,
  forward + backward, read as HBM bytes per element at `hbm_efficiency`).
- Links: NVIDIA/nccl-tests issue 212 (NCCL maintainer: H100 ring bus bandwidth 370 of 450 GB/s),
  NVIDIA/nccl issue 1712 (A100: "close to 240 GB/s"), nccl-tests issues 119 and 290 (24 GB/s per
  200 Gb/s NIC, 46-48 GB/s per 400 Gb/s NIC), stas00/ml-engineering network/benchmarks/results/
  all-reduce-8xH200.md @c53741b8 (32 KiB all-reduce in 40 us over 14 ring steps).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

# How a stack runs the memory-bound kernels of a layer: eager PyTorch ops, torch.compile's
# fused Triton kernels, or hand-written fused kernels (unsloth, Liger, Transformer Engine).
Fusion = Literal["eager", "compiled", "fused"]

# Keys are `GPUSpec.architecture` values (tools/data/gpus.yaml): the largest share of the dense
# 16-bit peak a GEMM reaches (large shapes; `gemm_half_size` scales it down for small ones).
_GEMM_16BIT: dict[str, float] = {
    "Hopper": 0.80,  # XLA sm_90 table 0.79-0.82 at 4096-class shapes; MAMF H100 SXM 0.803
    "Ampere": 0.80,  # bitsandbytes switchback A100 0.73-0.82 (typical 0.78); MAMF 0.81-0.87
    "Blackwell": 0.78,  # MAMF B200 1745 / 2250
    "Ada Lovelace": 0.90,  # RTX 4090 168 of its fp32-accumulate 165.2 (device-benchmarks),
    # capped below 1: a single square matmul under a cool clock, not a sustained layer
    "Volta": 0.67,  # V100 fp16 84 of 125 (device-benchmarks)
    "Turing": 0.60,  # no measurement: assumed, Volta's share rounded down
    "CDNA 3": 0.51,  # MAMF MI300X 668.4 / 1300 (TunableOp on)
    "CDNA 4": 0.68,  # MAMF MI355X 1565 / 2300
    "Gaudi 3": 0.74,  # MAMF Gaudi 3 1243 / 1677
}
# Power-limited SKUs reach far less of their datasheet peak than the same chip at full power.
_GEMM_BY_GPU: dict[str, float] = {
    "H100-PCIe": 0.57,  # pytorch/ao pull request 3342: 433.0 of 756.5 TFLOPS
    "H100-NVL": 0.55,  # Liger's SwiGLU MLP layer on H100 NVL, 449-458 of 835.5 (GEMM-bound)
    "A10": 0.45,  # device-benchmarks A10 24GB: 56 of 125
    "A10G": 0.45,  # the A10's chip at its power (no separate measurement: assumed)
    "L4": 0.45,  # 72 W like the A10 class (no measurement: assumed the A10's share)
    "T4": 0.45,  # 70 W (no measurement: assumed the A10's share)
    # The RTX 4090's AD102 die at less power: it reaches 168 TFLOPS at 450 W (device-benchmarks),
    # so at 300-350 W these cards cannot pass that, whatever their full-rate datasheet says.
    "RTX6000-Ada": 0.45,  # 165 of 364.2
    "L40S": 0.45,  # 165 of 362.05
}
# Hopper under compute and NCCL traffic at once draws more than its power limit and drops its
# clock from 1980 to about 1575 MHz (deepseek-ai/DeepGEMM issue 120, on H800/H100): the
# tensor-core kernels of a run whose communication overlaps its compute run at that share of
# the clock the kernel benchmarks saw. No such measurement for other generations.
_OVERLAP_CLOCK: dict[str, float] = {"Hopper": 1575 / 1980}
_GEMM_FP8: dict[str, float] = {
    "Hopper": 0.70,  # MAMF H100 FP8 1402.6 / 1979 (H200 0.734; DeepGEMM 1550 on H800)
    "Blackwell": 0.76,  # MAMF B200 FP8 3432.5 / 4500
    "Ada Lovelace": 0.70,  # no measurement: assumed Hopper's share
    "CDNA 3": 0.40,  # no measurement: assumed below the 16-bit share
    "CDNA 4": 0.50,  # no measurement: assumed below the 16-bit share
    "Gaudi 3": 0.50,  # no measurement: assumed below the 16-bit share
}
# FlashAttention-2 class kernels (PyTorch SDPA's flash backend, flash-attn 2), forward + backward
# at 1 : 2.5 FLOPs, causal half skipped, as a share of the dense 16-bit peak.
_ATTENTION: dict[str, float] = {
    "Hopper": 0.29,  # flash-attention PR 1791: FA2 284 fwd / 287 bwd TFLOPS of 989.4
    "Blackwell": 0.29,  # no measurement: assumed Hopper's FA2 share
    "Ampere": 0.42,  # A100 FA2 causal forward 156 of 312; backward bracketed by the ratios of
    # Hopper (1.01) and the RTX 4090 (0.66): 0.37-0.50, the middle taken
    "Ada Lovelace": 0.67,  # apache/tvm flash_perf.md, RTX 4090: 151 fwd / 99 bwd of 165.2
    "Volta": 0.20,  # no FlashAttention on Volta; memory-efficient SDPA: no measurement, assumed
    "Turing": 0.20,  # as Volta: no measurement, assumed
    "CDNA 3": 0.20,  # no measurement: assumed
    "CDNA 4": 0.20,  # no measurement: assumed
    "Gaudi 3": 0.20,  # no measurement: assumed
}
# FlashAttention-3 class kernels (Transformer Engine's cuDNN attention, flash-attn 3) on Hopper.
_ATTENTION_FA3: dict[str, float] = {
    "Hopper": 0.56,  # flash-attention PR 1791: FA3 630 fwd / 532 bwd TFLOPS of 989.4
    "Blackwell": 0.56,  # no measurement: assumed Hopper's
}
# Memory-bound kernels: HBM bytes per element, forward + backward, by how the stack runs them.
# Norms and RoPE: Liger's H100 NVL and A100 tables (eager transformers 166-206 B per normalised
# element, torch.compile 30-32, Liger 13-21; RoPE per rotated element 105 / 31 / 7.5).
_NORM = {"eager": 190.0, "compiled": 31.0, "fused": 17.0}
_ROPE = {"eager": 105.0, "compiled": 31.0, "fused": 7.5}
# The activation of the MLP, per element of its inner width: a byte count of the kernels, not
# measured. Eager SwiGLU: silu reads and writes I, the product reads 2 I and writes I (10 B in
# 16-bit), the backward three elementwise products (18 B); fused: read e, g, write h (6 B), the
# backward reads dh, e, g and writes de, dg (10 B). GELU: 4 + 6 B eager, fused 3 + 5.
_GATED_ACT = {"eager": 28.0, "compiled": 16.0, "fused": 16.0}
_GELU_ACT = {"eager": 10.0, "compiled": 8.0, "fused": 8.0}
# Residual adds per unit of hidden size, forward (2 adds: read 2 h, write h) and backward (two
# gradient accumulations): 24 B eager; a compiled or fused stack folds them into the norms.
_RESIDUAL = {"eager": 24.0, "compiled": 12.0, "fused": 12.0}
# The loss per vocabulary entry, forward + backward: Liger's cross-entropy rows (H100 NVL, fp32
# logits: eager 47 B, torch.compile 31, Liger 18), plus 6 B for the 16-bit logits' upcast where
# the eager loss casts them.
_LOSS = {"eager": 53.0, "compiled": 31.0, "fused": 18.0}


class ThroughputAssumptions(BaseModel):
    """Kernel efficiencies, link efficiencies, overlap and schedule constants (see the module
    docstring); `mfu_override` replaces the whole model with one utilisation."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    gemm_efficiency: dict[str, float] = Field(
        default_factory=lambda: dict(_GEMM_16BIT),
        description="largest share of the dense 16-bit peak a matmul reaches, per architecture",
    )
    gemm_by_gpu: dict[str, float] = Field(
        default_factory=lambda: dict(_GEMM_BY_GPU),
        description="the same for power-limited GPU models (by GPU id), over the architecture's",
    )
    gemm_half_size: float = Field(
        default=200.0,
        gt=0,
        description="a GEMM whose smallest dimension is x reaches x / (x + this) of the largest"
        " share: the XLA sm_90 table's curve (0.45 at 256, 0.67 at 1024, 0.76 at 4096)",
    )
    fp8_gemm_efficiency: dict[str, float] = Field(
        default_factory=lambda: dict(_GEMM_FP8),
        description="share of the dense FP8 peak the FP8 block matmuls reach, per architecture",
    )
    attention_efficiency: dict[str, float] = Field(
        default_factory=lambda: dict(_ATTENTION),
        description="share of the dense 16-bit peak FlashAttention-2 class kernels reach forward"
        " and backward (causal FLOPs halved), per architecture",
    )
    attention_fa3_efficiency: dict[str, float] = Field(
        default_factory=lambda: dict(_ATTENTION_FA3),
        description="the same for FlashAttention-3 class kernels (Transformer Engine's cuDNN"
        " attention), where a stack uses them",
    )
    default_efficiency: float = Field(
        default=0.50, gt=0, le=1, description="GEMM efficiency for an architecture not listed"
    )
    overlap_clock: dict[str, float] = Field(
        default_factory=lambda: dict(_OVERLAP_CLOCK),
        description="share of its clock a GPU keeps for tensor-core kernels while NCCL traffic"
        " overlaps them (power-limited), per architecture; 1 where not listed",
    )
    norm_bytes: dict[str, float] = Field(
        default_factory=lambda: dict(_NORM),
        description="HBM bytes per normalised element, forward + backward, by kernel fusion",
    )
    rope_bytes: dict[str, float] = Field(
        default_factory=lambda: dict(_ROPE),
        description="HBM bytes per rotated query/key element, forward + backward, by fusion",
    )
    gated_act_bytes: dict[str, float] = Field(
        default_factory=lambda: dict(_GATED_ACT),
        description="HBM bytes per inner MLP element of a gated activation (SwiGLU), by fusion",
    )
    gelu_act_bytes: dict[str, float] = Field(
        default_factory=lambda: dict(_GELU_ACT),
        description="HBM bytes per inner MLP element of a plain GELU activation, by fusion",
    )
    residual_bytes: dict[str, float] = Field(
        default_factory=lambda: dict(_RESIDUAL),
        description="HBM bytes per hidden element of a layer's residual adds, by fusion",
    )
    loss_bytes: dict[str, float] = Field(
        default_factory=lambda: dict(_LOSS),
        description="HBM bytes per token per vocabulary entry of the loss, by fusion",
    )
    lora_bytes_per_width: float = Field(
        default=12.0,
        ge=0,
        description="bytes per token per unit of (input + output) width of each LoRA-adapted"
        " layer: A reads the input again, B's output is written, scaled and added, forward +"
        " backward (PEFT's LoraLayer.forward)",
    )
    fp8_cast_bytes: float = Field(
        default=3.0,
        ge=0,
        description="bytes per element of a block linear's input and output to cast them to"
        " FP8 (forward input, backward output gradient): the FP8 recipes fuse the cast into the"
        " kernel before it (torch.compile, Transformer Engine's fused LayerNorm-Linear), which"
        " leaves the 1-byte write and its scale's read, ~1.5 B each way",
    )
    hbm_efficiency: float = Field(
        default=0.80,
        gt=0,
        le=1,
        description="share of the peak memory bandwidth memory-bound kernels reach (STREAM-"
        "like copies reach 0.8-0.9 of HBM peak)",
    )
    optimizer_bytes_per_param: float = Field(
        default=30.0,
        ge=0,
        description="HBM traffic of one optimizer step per trainable parameter held: read and"
        " write the fp32 master and two moments (24 B), read the gradient (4), write the 16-bit"
        " weight (2)",
    )
    qlora_dequant_bytes_per_param: float = Field(
        default=4.5,
        ge=0,
        description="bytes moved per frozen 4-bit parameter per pass to de-quantize it: read"
        " 0.5 B of NF4 and its constants, write 2 B of bf16, which the matmul reads again",
    )
    qlora_dequant_efficiency: float = Field(
        default=0.80,
        gt=0,
        le=1,
        description="share of the peak bandwidth bitsandbytes' de-quantization reaches: no"
        " absolute measurement of its kernel was found (bitsandbytes pull request 1747 gives"
        " only relative speedups), so a streaming kernel's share is assumed (`hbm_efficiency`)",
    )
    cpu_optimizer_gbs: float = Field(
        default=20.0,
        gt=0,
        description="host memory bandwidth, GB/s, one GPU's CPU optimizer step gets when the"
        " optimizer is offloaded: CPU Adam streams the fp32 master, moments and gradient"
        " (`optimizer_bytes_per_param`); no measurement: assumed, a two-socket server's 150-300"
        " GB/s of DRAM bandwidth shared by its 8 GPUs",
    )
    mfu_override: float | None = Field(
        default=None,
        gt=0,
        le=1,
        description="use this utilisation of the executed FLOPs for every cluster, ignoring"
        " the kernel, communication and pipeline model",
    )
    links: LinkAssumptions = Field(default_factory=lambda: LinkAssumptions())
    pipeline: PipelineAssumptions = Field(default_factory=lambda: PipelineAssumptions())

    def gemm(self, architecture: str, gpu_id: str = "") -> float:
        """The largest 16-bit GEMM share of a GPU (its model's where listed)."""
        found = self.gemm_by_gpu.get(gpu_id)
        return (
            found
            if found is not None
            else self.gemm_efficiency.get(architecture, self.default_efficiency)
        )

    def gemm_at(self, architecture: str, gpu_id: str, smallest_dim: float) -> float:
        """The share a GEMM whose smallest dimension is `smallest_dim` reaches."""
        x = max(smallest_dim, 1.0)
        return self.gemm(architecture, gpu_id) * x / (x + self.gemm_half_size)

    def gemm_fp8(self, architecture: str) -> float:
        return self.fp8_gemm_efficiency.get(architecture, self.default_efficiency / 2)

    def attention(self, architecture: str, fa3: bool = False) -> float:
        if fa3 and architecture in self.attention_fa3_efficiency:
            return self.attention_fa3_efficiency[architecture]
        return self.attention_efficiency.get(architecture, self.default_efficiency / 3)


class LinkAssumptions(BaseModel):
    """How collectives use the links: bandwidth shares, latency, what overlaps compute."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    nvlink_efficiency: float = Field(
        default=0.82,
        gt=0,
        le=1,
        description="NCCL ring bus bandwidth as a share of one direction of NVLink (the"
        " datasheet figure is both directions): 370 of 450 GB/s on H100 (nccl-tests issue 212,"
        " NCCL's maintainer), 367.6 on H200 with SHARP off; A100 'close to 240' of 300 (nccl"
        " issue 1712)",
    )
    pcie_gbs: float = Field(
        default=25.0,
        gt=0,
        description="GPU-to-GPU bus bandwidth over PCIe without NVLink, GB/s (PCIe 4.0 x16 is"
        " 32 GB/s per direction; peer traffic crosses the host bridge)",
    )
    fabric_efficiency: dict[str, float] = Field(
        default_factory=lambda: {"infiniband": 0.94, "roce": 0.85, "efa": 0.75, "ethernet": 0.40},
        description="bus bandwidth as a share of the line rate: InfiniBand 0.94 (24 GB/s per"
        " 200 Gb/s NIC, 46-48 per 400 Gb/s: nccl-tests issues 119 and 290); RoCE 0.85, AWS EFA"
        " and GCP GPUDirect-TCPX ('efa': RDMA-capable Ethernet at or above `fast_ethernet_gbps`)"
        " 0.75 and TCP over plain Ethernet 0.4 have no ring measurement: assumed",
    )
    fast_ethernet_gbps: float = Field(
        default=800.0,
        gt=0,
        description="Ethernet at or above this many Gbit/s per node is RDMA-capable (AWS EFA,"
        " GCP GPUDirect-TCPX/RDMA) and counts as 'efa'",
    )
    default_network_gbps: dict[str, float] = Field(
        default_factory=lambda: {"infiniband": 1600.0, "roce": 1600.0, "ethernet": 100.0},
        description="per-node Gbit/s when the catalog does not say (8 x 200 Gb/s HDR rails;"
        " 100 Gb/s Ethernet)",
    )
    step_latency_s: float = Field(
        default=3e-6,
        ge=0,
        description="latency per ring step of one collective, seconds: a ring over D ranks"
        " takes D - 1 steps per all-gather or reduce-scatter; a 32 KiB all-reduce over 8 H200s"
        " takes 40 us for 14 steps (stas00/ml-engineering all-reduce-8xH200.md)",
    )
    grad_reduce_bytes: float = Field(
        default=4.0,
        gt=0,
        description="bytes per gradient element reduced: fp32 (FSDP mixed precision's"
        " reduce_dtype in torchtitan and llm-foundry; DDP over autocast's fp32 gradients)",
    )
    shard_overlap: float = Field(
        default=1.0,
        ge=0,
        le=1,
        description="share of the compute ZeRO-3/FSDP all-gathers and reduce-scatters hide"
        " behind (FSDP prefetches the next layer's weights; only the first gather is exposed)",
    )
    grad_sync_overlap: float = Field(
        default=1.0,
        ge=0,
        le=1,
        description="share of the last micro-step's backward that DDP/ZeRO-2 bucketed gradient"
        " reduction hides behind (PyTorch DDP buckets, DeepSpeed overlap_comm)",
    )
    tp_overlap: float = Field(
        default=0.5,
        ge=0,
        le=1,
        description="share of tensor-parallel activation all-reduces hidden behind compute"
        " (Megatron --tp-comm-overlap and torchtitan's async TP overlap them; eager TP does not)",
    )


class PipelineAssumptions(BaseModel):
    """The pipeline schedule the ranking assumes when it chooses pipeline stages itself."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    microbatches_per_stage: int = Field(
        default=8,
        ge=1,
        description="micro-batches per optimizer step per pipeline stage when the job does not"
        " accumulate more: the 1F1B bubble is (stages - 1) / (virtual stages x micro-batches)"
        " (Narayanan et al. 2021, section 2.2); m = 8 p keeps it under 1/8",
    )
    virtual_stages: int = Field(
        default=1,
        ge=1,
        description="model chunks per GPU (interleaved 1F1B); 1 = plain 1F1B (torchtitan's"
        " default schedule)",
    )


ThroughputAssumptions.model_rebuild()
