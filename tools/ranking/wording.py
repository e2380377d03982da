"""The ranking's own assumptions in words, for the job summary (one line each)."""

from __future__ import annotations

from tools.ranking.images import ImageRankRequest
from tools.ranking.models import RankRequest
from tools.ranking.time.assumptions import ThroughputAssumptions


def job_assumptions(request: RankRequest | ImageRankRequest) -> list[str]:
    """Margin, FLOP counting, kernel and link model, setup, failures, spot and billing."""
    a = request.assumptions
    t, s, u, g = a.throughput, a.spot, a.setup, a.goodput
    return [
        f"memory safety margin {a.memory_margin:.0%}: need x {1 + a.memory_margin:g} must fit"
        " (a plan whose need fits only without it is ranked last, marked TIGHT)",
        "training FLOPs per token: 6 x block-linear parameters (4 x for a frozen LoRA base, + 6 x"
        " adapters), 6 x V x h for the LM head (4 x frozen), attention 12 x layers x width x"
        " sequence, halved for causal masks under fused kernels; full checkpointing reruns the"
        " layers' forward, selective the attention core; MoE counts the active experts",
        *_speed(t),
        f"setup before the first step, billed like training: {u.provisioning_minutes:g} min"
        f" provisioning + {u.environment_minutes:g} min image and environment + the weights"
        f" ({u.weight_bytes_per_param:g} B per parameter; none when pretraining) and each node's"
        f" share of the data ({u.data_bytes_per_token:g} B per token) at"
        f" {u.download_gbps:g} Gbit/s",
        f"hardware failures: {g.failures_per_gpu_hour:.2g} per GPU-hour (Llama 3: 419 in 54"
        " days on 16,384 GPUs), each costing a restart and half a checkpoint interval",
        f"spot: {s.preemption_rate_per_hour:g} interruptions per node-hour; checkpoints written at"
        f" {s.storage_bandwidth_bytes_per_s / 1e9:g} GB/s per node; {s.restart_hours * 60:g} min"
        " per restart; Young/Daly interval sqrt(2·C·MTBF)",
        "billing: each node rounded up to its billing unit, then to the minimum charge",
    ]


def _speed(t: ThroughputAssumptions) -> list[str]:
    if t.mfu_override is not None:
        return [f"utilisation {t.mfu_override:.2f} of the executed FLOPs on every cluster (given)"]
    gemm = ", ".join(f"{arch} {value:.2f}" for arch, value in t.gemm_efficiency.items())
    attn = ", ".join(f"{arch} {value:.2f}" for arch, value in t.attention_efficiency.items())
    k = t.links
    return [
        f"kernel rates (kernel benchmarks, tools/ranking/time/assumptions.py): 16-bit GEMMs at"
        f" up to {gemm} of the dense peak, less for small shapes (x / (x +"
        f" {t.gemm_half_size:g}) of it for a smallest dimension x); FP8 block GEMMs at"
        f" {t.gemm_fp8('Hopper'):.2f} of the FP8 peak (Hopper); FlashAttention-2 class attention"
        f" at {attn}; memory-bound kernels (norms, RoPE, the MLP activation, residuals, loss) as"
        " bytes per element measured eager, compiled or fused, by the stack, at"
        f" {t.hbm_efficiency:.2f} of HBM bandwidth",
        f"communication: NCCL rings at {k.nvlink_efficiency:.2f} of one NVLink direction,"
        f" {k.pcie_gbs:g} GB/s over PCIe, the node's network at "
        + ", ".join(f"{name} {v:.2f}" for name, v in k.fabric_efficiency.items())
        + f" of line rate; ZeRO-3 gathers hidden behind compute, {k.tp_overlap:.0%} of tensor-"
        "parallel all-reduces hidden; pipeline bubble (stages - 1) / micro-batches with"
        f" {t.pipeline.microbatches_per_stage} micro-batches per stage",
        f"QLoRA de-quantization: {t.qlora_dequant_bytes_per_param:g} B per frozen parameter per"
        f" pass at {t.qlora_dequant_efficiency:.2f} of peak memory bandwidth; an offloaded"
        f" optimizer steps on the CPU at {t.cpu_optimizer_gbs:g} GB/s per GPU, its gradients and"
        f" weights crossing PCIe at {t.links.pcie_gbs:g} GB/s",
    ]
