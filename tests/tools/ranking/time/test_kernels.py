"""Peak selection, memory-bound bytes and seconds per token by kernel kind, by hand."""

from __future__ import annotations

import pytest

from tools.architectures.registry import resolve_model
from tools.errors import InvalidInputError
from tools.gpus import GPUSpec, lookup_gpu
from tools.memory.states.inventory import resolve_targets
from tools.ranking.time.assumptions import ThroughputAssumptions
from tools.ranking.time.flops import TokenFlops
from tools.ranking.time.kernels import (
    KernelChoices,
    block_gemm_share,
    gemm_shapes,
    kernel_choices,
    memory_bound_bytes,
    peak_tflops,
    token_times,
)

LLAMA2_7B = resolve_model("meta-llama/Llama-2-7b-hf")
# Round efficiencies for an architecture of its own, so the arithmetic is exact.
ROUND = ThroughputAssumptions(
    gemm_efficiency={"Test": 0.5},
    fp8_gemm_efficiency={"Test": 0.5},
    attention_efficiency={"Test": 0.2},
    hbm_efficiency=0.5,
)


def gpu(**peaks: float | None) -> GPUSpec:
    """A synthetic GPU with chosen peaks, 1000 GB/s, so these tests do not depend on the table."""
    return GPUSpec(
        id="TEST",
        name="Test GPU",
        vendor="NVIDIA",
        architecture="Test",
        vram_gib=80,
        memory_type="HBM3",
        memory_bandwidth_gbs=1000,
        fp8=peaks.get("fp8_tflops") is not None,
        bf16=peaks.get("bf16_tflops") is not None,
        form_factor="SXM",
        sources=["synthetic"],
        **peaks,
    )


def test_peak_selection_and_fallbacks() -> None:
    hopper = gpu(bf16_tflops=100.0, fp16_tflops=100.0, tf32_tflops=50.0, fp8_tflops=200.0)
    ampere = gpu(bf16_tflops=312.0, fp16_tflops=312.0, tf32_tflops=156.0)
    volta = gpu(fp16_tflops=125.0)
    assert peak_tflops(ampere, "bf16-mixed") == (312.0, "BF16"), "mixed BF16 uses the BF16 peak"
    assert peak_tflops(volta, "fp16-mixed") == (125.0, "FP16"), "mixed FP16 uses the FP16 peak"
    assert peak_tflops(ampere, "fp32") == (156.0, "TF32"), "FP32 training runs on TF32 cores"
    assert peak_tflops(volta, "bf16") == (125.0, "FP16"), "no BF16 cores: FP16 mixed precision"
    assert peak_tflops(volta, "fp32") is None, "no TF32 tensor cores: no usable peak"
    assert peak_tflops(hopper, "fp8") == (200.0, "FP8"), "FP8 tensor cores"
    assert peak_tflops(ampere, "fp8") is None, "no FP8 tensor cores: no fp8 training"
    with pytest.raises(InvalidInputError, match=r"precision: got 'int3'; valid: bf16, bf16-mixed"):
        peak_tflops(ampere, "int3")


def test_memory_bound_bytes_by_hand() -> None:
    a = ThroughputAssumptions()
    # Llama 2 7B, eager: per layer two norms 190 B x 4096 each, RoPE 105 B x (4096 + 4096),
    # SwiGLU 28 B x 11,008, residuals 24 B x 4096 = 2,823,168 B; x 32 layers = 90,341,376;
    # the eager loss 53 B x 32,000 = 1,696,000
    assert memory_bound_bytes(LLAMA2_7B, "none", "bf16-mixed", (), a) == (92_037_376, 0.0)
    # full recomputation reruns the forward third of the layers' traffic: + 30,113,792
    assert memory_bound_bytes(LLAMA2_7B, "full", "bf16-mixed", (), a) == (
        122_151_168,
        30_113_792,
    ), "recomputed forward"
    # LoRA on every linear: 32 x (4 x 8192 + 2 x 15,104 + 15,104) = 2,498,560 of width x 12 B
    targets = resolve_targets(LLAMA2_7B, "all-linear")
    lora, _ = memory_bound_bytes(LLAMA2_7B, "none", "bf16-mixed", targets, a)
    assert lora == 92_037_376 + 29_982_720, "adapters' extra kernels"
    # fp8 casts every block linear's input and output: 2,498,560 x 3 B
    fp8, _ = memory_bound_bytes(LLAMA2_7B, "none", "fp8", (), a)
    assert fp8 == 92_037_376 + 7_495_680, "FP8 casts"
    # compiled: norms 2 x 31 x 4096, RoPE 31 x 8192, SwiGLU 16 x 11,008, residuals 12 x 4096 =
    # 733,184 B a layer, x 32; a compiled loss 31 x 32,000
    compiled = KernelChoices("compiled", "compiled")
    assert memory_bound_bytes(LLAMA2_7B, "none", "bf16-mixed", (), a, compiled) == (
        23_461_888 + 992_000, 0.0
    )  # fmt: skip


def test_kernel_choices_by_stack() -> None:
    assert kernel_choices("hf", False, "standard", False) == KernelChoices()
    assert kernel_choices("hf", True, "standard", True) == KernelChoices("compiled", "compiled")
    assert kernel_choices("unsloth", False, "forward-grad", False) == KernelChoices(
        "fused", "fused"
    )
    assert kernel_choices("megatron", False, "fp32-inplace", False) == KernelChoices(
        "fused", "eager", fa3=True
    ), "Transformer Engine: fused kernels and cuDNN attention"


def test_gemm_shares_fall_with_the_smallest_dimension() -> None:
    """x / (x + 200) of the largest share: the XLA sm_90 table's curve."""
    a = ThroughputAssumptions()
    assert a.gemm_at("Hopper", "H100-SXM", 4096) == pytest.approx(0.80 * 4096 / 4296)
    assert a.gemm_at("Hopper", "H100-SXM", 256) == pytest.approx(0.80 * 256 / 456)
    assert a.gemm("Hopper", "H100-PCIe") == 0.57, "a power-limited SKU's own share"
    big = gemm_shapes(LLAMA2_7B, 4096)
    small = gemm_shapes(LLAMA2_7B, 256)
    h100 = lookup_gpu("H100-SXM")
    assert block_gemm_share(small, h100, a) < block_gemm_share(big, h100, a) < 0.80
    assert sum(w for w, _ in big.block) == pytest.approx(1.0)


FLOPS = TokenFlops(
    block_linear=1e12,
    head=2e11,
    adapters=0.0,
    attention=1e11,
    recompute_matmul=2e11,
    recompute_attention=5e10,
)


def test_token_times_by_hand() -> None:
    card = gpu(bf16_tflops=100.0, fp16_tflops=100.0, tf32_tflops=50.0, fp8_tflops=200.0)
    got = token_times(FLOPS, (4e9, 1e9), card, "bf16-mixed", ROUND)
    # matmuls (1e12 + 2e11) / (100e12 x 0.5) = 0.024 s; attention 1e11 / (100e12 x 0.2) = 0.005 s;
    # memory 4e9 / (1000e9 x 0.5) = 0.008 s
    assert got.matmul == pytest.approx(0.024), "matmuls at the GEMM rate"
    assert got.attention == pytest.approx(0.005), "attention at its own rate"
    assert got.memory == pytest.approx(0.008), "memory-bound kernels at the bandwidth"
    assert got.total == pytest.approx(0.037), "sum"
    # recompute: 2e11 / 50e12 + 5e10 / 20e12 + 1e9 / 500e9 = 0.004 + 0.0025 + 0.002
    assert got.recompute == pytest.approx(0.0085), "each recomputed kernel at its own rate"
    fp8 = token_times(FLOPS, (4e9, 1e9), card, "fp8", ROUND)
    # block linears at the FP8 peak: 1e12 / (200e12 x 0.5) = 0.01 s; the LM head stays 16-bit
    assert fp8.matmul == pytest.approx(0.01 + 0.004), "FP8 block GEMMs, 16-bit head"
    assert fp8.attention == got.attention, "attention stays 16-bit"


def test_defaults_cover_every_architecture_in_the_table() -> None:
    from tools.gpus import list_gpus

    a = ThroughputAssumptions()
    for spec in list_gpus():
        assert spec.architecture in a.gemm_efficiency, f"{spec.id}: no GEMM efficiency"
        assert spec.architecture in a.attention_efficiency, f"{spec.id}: no attention efficiency"
        if spec.fp8_tflops is not None:
            assert spec.architecture in a.fp8_gemm_efficiency, f"{spec.id}: no FP8 efficiency"


def test_expert_parallelism_feeds_each_expert_more_tokens() -> None:
    """A routed expert of Mixtral (8 experts, 2 per token) sees a quarter of the micro-batch's
    tokens, times the expert-parallel degree: larger GEMMs reach a larger share (the router's
    8-wide output is its own smallest dimension either way)."""
    mixtral = resolve_model("mixtral 8x7b")
    one, eight = gemm_shapes(mixtral, 1024), gemm_shapes(mixtral, 1024, expert_parallel=8)
    assert sorted({x for _, x in one.block}) == [8, 256, 1024]
    assert sorted({x for _, x in eight.block}) == [8, 1024, 2048]
    h100 = lookup_gpu("H100-SXM")
    a = ThroughputAssumptions()
    assert block_gemm_share(eight, h100, a) > block_gemm_share(one, h100, a)
