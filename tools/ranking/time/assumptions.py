"""Every constant of the time model, with where it comes from; all overridable per request.

Units: efficiencies are fractions of a datasheet peak (dense tensor TFLOPS, HBM GB/s, link
GB/s); bytes are per token, per parameter or per element as each name says; times in seconds
unless a name says hours or minutes; bandwidth in GB/s (1e9 B/s) or Gbit/s where it says gbps.

The efficiencies are the model's calibration. They were set from sources outside the rows they
are judged on where such sources exist (kernel benchmarks, speedups reported next to the
published rows), and otherwise from the dev set's large, short-sequence runs per GPU
generation (`benchmarks/published_runs/time.py` prints the per-run ratios): one number per
generation, never one per run.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

# Keys are `GPUSpec.architecture` values (tools/data/gpus.yaml).
_GEMM_16BIT: dict[str, float] = {
    # Large-model, short-sequence runs of each generation: llm-foundry's A100 7B and 70B rows
    # (64 % MFU, 71 % HFU with recomputation: mosaicml/llm-foundry scripts/train/benchmarking
    # README) and the Megatron-LM paper's 52 % of peak on 3,072 A100s (Narayanan et al. 2021,
    # Table 1) put the Ampere GEMMs near 0.70 once memory-bound kernels are counted apart.
    "Ampere": 0.70,
    # Hopper reaches a smaller share of its larger peak: Megatron-LM's README reports 41-48 %
    # MFU on H100 with fused kernels and overlapped communication, llm-foundry 46 % for 7B.
    "Hopper": 0.56,
    "Blackwell": 0.56,  # no published open measurements here: Hopper's share assumed
    "Ada Lovelace": 0.60,  # GeForce/workstation Ada: peak with fp32 accumulate (see gpus.yaml)
    "Volta": 0.60,
    "Turing": 0.60,
    # MI300X: an assumption. SemiAnalysis ("MI300X vs H100 vs H200 Benchmark Part 1:
    # Training", 2024-12) found its on-paper peak far from realised in training; 0.40 of the
    # 1,307 TFLOPS BF16 peak puts it near an H100 per GPU.
    "CDNA 3": 0.40,
    "CDNA 4": 0.40,  # MI355X: no open training measurements here; CDNA 3's share assumed
    "Gaudi 3": 0.40,  # Intel Gaudi 3: none either; the AMD parts' share assumed
}
_GEMM_FP8: dict[str, float] = {
    # Share of the FP8 peak. FP8 speedups measured next to bf16 on the same stack: torchtitan
    # 8,532 against 6,667 tokens/s/GPU for Llama 3.1 8B with torch.compile, 1.28x
    # (docs/performance.md, Table 1); llm-foundry's MPT-3B at 30,586 tokens/s/GPU in FP8
    # against 22,525-24,142 in BF16 (scripts/train/benchmarking/README.md), 1.27-1.36x;
    # torchao up to 1.25x at 8 GPUs / 8B and 1.5x at 512 GPUs / 405B (torchao/float8/README.md).
    # With attention and memory-bound kernels unchanged, those need the block GEMMs ~1.65x
    # faster than 16-bit GEMMs at 0.56 of the BF16 peak: 0.45 of the (twice as high) FP8 peak.
    "Hopper": 0.45,
    "Blackwell": 0.45,
    "Ada Lovelace": 0.45,
    "CDNA 3": 0.30,
    "CDNA 4": 0.30,
    "Gaudi 3": 0.30,
}
_ATTENTION: dict[str, float] = {
    # Fused attention (FlashAttention-2 as PyTorch SDPA runs it) counted with the causal half
    # skipped: torchtitan's Llama 3.1 8B long-context rows (docs/performance.md, Table 2:
    # 3,890 / 2,540 / 1,071 / 548 tokens/s/GPU at 32k / 64k / 131k / 262k) grow in time per
    # token by about 7 us per 1k tokens of sequence, i.e. attention at ~150 TFLOPS = 0.15 of
    # the H100 peak; kernel-only benchmarks read about twice that (FlashAttention-2 paper,
    # Dao 2023, Figure 7, A100; FlashAttention-3 paper, Shah et al. 2024, Figure 5, H100).
    "Hopper": 0.15,
    "Blackwell": 0.15,
    # A100: FlashAttention-2 reaches 0.55-0.65 of the A100 peak kernel-only (Dao 2023,
    # Figure 4, causal, head dim 128); halved as on Hopper.
    "Ampere": 0.30,
    "Ada Lovelace": 0.25,
    "Volta": 0.20,
    "Turing": 0.20,
    "CDNA 3": 0.12,
    "CDNA 4": 0.12,
    "Gaudi 3": 0.12,
}


class ThroughputAssumptions(BaseModel):
    """Kernel efficiencies, link efficiencies, overlap and schedule constants (see the module
    docstring); `mfu_override` replaces the whole model with one utilisation."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    gemm_efficiency: dict[str, float] = Field(
        default_factory=lambda: dict(_GEMM_16BIT),
        description="share of the dense 16-bit peak the matmuls reach, per GPU architecture",
    )
    fp8_gemm_efficiency: dict[str, float] = Field(
        default_factory=lambda: dict(_GEMM_FP8),
        description="share of the dense FP8 peak the FP8 block matmuls reach, per architecture",
    )
    attention_efficiency: dict[str, float] = Field(
        default_factory=lambda: dict(_ATTENTION),
        description="share of the dense 16-bit peak fused attention reaches (causal FLOPs"
        " halved), per architecture",
    )
    default_efficiency: float = Field(
        default=0.50, gt=0, le=1, description="GEMM efficiency for an architecture not listed"
    )
    memory_bound_bytes_per_hidden: float = Field(
        default=480.0,
        ge=0,
        description="bytes each token moves through HBM per decoder layer in memory-bound"
        " kernels, forward + backward, per unit of hidden size: eager PyTorch's RMSNorm with"
        " fp32 upcasts (~36 h B each, two per layer), rotary embeddings, transposes, residual"
        " adds and the SwiGLU product, counted from transformers' LlamaDecoderLayer, ~160 h"
        " forward, twice that backward",
    )
    loss_bytes_per_vocab: float = Field(
        default=28.0,
        ge=0,
        description="bytes per token per vocabulary entry for the loss: logits upcast to fp32,"
        " log-softmax, its gradient and the cast back (forward + backward)",
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
        default=0.50,
        gt=0,
        le=1,
        description="share of the peak bandwidth bitsandbytes' de-quantization reaches:"
        " LitGPT's Llama 2 7B LoRA vs QLoRA rows on one A100 40GB (2.36 vs 3.68 min per 1k"
        " micro-steps, Lightning-AI/litgpt tutorials/resource-tables.md) take 0.079 s per"
        " micro-step more, 9 B per parameter per pass at peak bandwidth",
    )
    offload_factor: float = Field(
        default=0.50,
        gt=0,
        le=1,
        description="speed multiplier with the optimizer offloaded to CPU (CPU Adam and PCIe"
        " copies each step; ZeRO-Offload, Ren et al. 2021, reports 30-50 % of GPU-only speed)",
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

    def gemm(self, architecture: str) -> float:
        return self.gemm_efficiency.get(architecture, self.default_efficiency)

    def gemm_fp8(self, architecture: str) -> float:
        return self.fp8_gemm_efficiency.get(architecture, self.default_efficiency / 2)

    def attention(self, architecture: str) -> float:
        return self.attention_efficiency.get(architecture, self.default_efficiency / 3)


class LinkAssumptions(BaseModel):
    """How collectives use the links: bandwidth shares, latency, what overlaps compute."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    nvlink_efficiency: float = Field(
        default=0.80,
        gt=0,
        le=1,
        description="NCCL bus bandwidth as a share of one direction of NVLink (the datasheet"
        " figure is both directions): nccl-tests all_reduce on DGX A100 ~230 of 300 GB/s",
    )
    pcie_gbs: float = Field(
        default=25.0,
        gt=0,
        description="GPU-to-GPU bus bandwidth over PCIe without NVLink, GB/s (PCIe 4.0 x16 is"
        " 32 GB/s per direction; peer traffic crosses the host bridge)",
    )
    fabric_efficiency: dict[str, float] = Field(
        default_factory=lambda: {"infiniband": 0.90, "roce": 0.85, "efa": 0.75, "ethernet": 0.40},
        description="bus bandwidth as a share of the line rate: RDMA fabrics 0.85-0.9 (NCCL"
        " over InfiniBand/RoCE), AWS EFA and GCP GPUDirect-TCPX ('efa': RDMA-capable Ethernet at"
        " or above `fast_ethernet_gbps`) 0.75, TCP over plain Ethernet 0.4",
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
        default=2e-6,
        ge=0,
        description="latency per ring step of one collective, seconds: a ring over D ranks"
        " takes D - 1 steps per all-gather or reduce-scatter, each a hop of NCCL's low-latency"
        " protocols (LL/LL128: one to a few microseconds over NVLink and InfiniBand)",
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
