"""Training FLOPs, peak selection, the MFU model and QLoRA de-quantization time, by hand."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tools.errors import InvalidInputError
from tools.gpus import GPUSpec
from tools.ranking.throughput import (
    ClusterShape,
    ThroughputAssumptions,
    cluster_mfu,
    compute_hours,
    peak_tflops,
    qlora_dequant_hours,
    training_flops,
)


def _gpu(**peaks: float | None) -> GPUSpec:
    """A synthetic GPU with chosen peaks, so these tests do not depend on the datasheet table."""
    return GPUSpec(
        id="TEST",
        name="Test GPU",
        vendor="NVIDIA",
        architecture="Test",
        vram_gib=80,
        memory_type="HBM3",
        memory_bandwidth_gbs=2000,
        fp8=False,
        bf16=peaks.get("bf16_tflops") is not None,
        form_factor="SXM",
        sources=["synthetic"],
        **peaks,
    )


@pytest.mark.parametrize(
    ("method", "recompute", "expected"),
    [
        ("full", False, 6 * 7e9 * 1e9),  # 4.2e19
        ("pretrain", False, 6 * 7e9 * 1e9),
        ("full", True, 8 * 7e9 * 1e9),  # + one recomputed forward
        # frozen base 4 x 7e9 x 1e9 = 2.8e19, adapters 6 x 4e7 x 1e9 = 2.4e17 -> 2.824e19
        ("lora", False, 2.824e19),
        ("qlora", False, 2.824e19),
        # + 2 x (7e9 + 4e7) x 1e9 recompute = 1.408e19 -> 4.232e19
        ("lora", True, 4.232e19),
    ],
)
def test_training_flops(method: str, recompute: bool, expected: float) -> None:
    got = training_flops(method, 7e9, 4e7, 1e9, recompute)  # type: ignore[arg-type]
    assert got == pytest.approx(expected), f"{method}, recompute={recompute}"


def test_peak_selection_and_fallbacks() -> None:
    ampere = _gpu(bf16_tflops=312.0, fp16_tflops=312.0, tf32_tflops=156.0)
    volta = _gpu(fp16_tflops=125.0)
    assert peak_tflops(ampere, "bf16") == (312.0, "BF16"), "BF16 peak"
    assert peak_tflops(ampere, "bf16-mixed") == (312.0, "BF16"), "mixed BF16 uses the BF16 peak"
    assert peak_tflops(volta, "fp16-mixed") == (125.0, "FP16"), "mixed FP16 uses the FP16 peak"
    assert peak_tflops(ampere, "fp32") == (156.0, "TF32"), "FP32 training runs on TF32 cores"
    assert peak_tflops(volta, "bf16") == (125.0, "FP16"), "no BF16 cores: FP16 mixed precision"
    assert peak_tflops(volta, "fp32") is None, "no TF32 tensor cores: no usable peak"
    with pytest.raises(
        InvalidInputError, match=r"precision: got 'int3'; valid: bf16, bf16-mixed, fp16"
    ):
        peak_tflops(ampere, "int3")


@pytest.mark.parametrize(
    ("shape", "expected"),
    [
        (ClusterShape(gpus_per_node=1, nodes=1, interconnect="pcie", network="ethernet",
                      offload=False), 0.40),  # one GPU: no PCIe penalty
        (ClusterShape(gpus_per_node=8, nodes=1, interconnect="nvswitch", network="infiniband",
                      offload=False), 0.40),
        (ClusterShape(gpus_per_node=4, nodes=1, interconnect="pcie", network="ethernet",
                      offload=False), 0.40 * 0.75),
        (ClusterShape(gpus_per_node=8, nodes=2, interconnect="nvswitch", network="infiniband",
                      offload=False), 0.40 * 0.90),
        (ClusterShape(gpus_per_node=8, nodes=2, interconnect="pcie", network="ethernet",
                      offload=True), 0.40 * 0.75 * 0.60 * 0.50),  # 0.09
    ],
)  # fmt: skip
def test_cluster_mfu(shape: ClusterShape, expected: float) -> None:
    mfu, notes = cluster_mfu(shape, ThroughputAssumptions())
    assert mfu == pytest.approx(expected), f"MFU for {shape}"
    assert notes[0] == "MFU 0.40 base", "the base figure is named first"


def test_fast_ethernet_counts_as_roce_class() -> None:
    # AWS p5 nodes: 3200 Gbps EFA over Ethernet -> 0.40 x 0.85; a 100 Gbps Ethernet -> 0.40 x 0.60
    def shape(gbps: float | None) -> ClusterShape:
        return ClusterShape(gpus_per_node=8, nodes=2, interconnect="nvswitch", network="ethernet",
                            network_gbps=gbps, offload=False)  # fmt: skip

    mfu, notes = cluster_mfu(shape(3200), ThroughputAssumptions())
    assert mfu == pytest.approx(0.34), "fast Ethernet: RoCE factor"
    assert notes[-1] == "x0.85 multi-node ethernet 3200 Gbps (RoCE-class)", "named in the notes"
    assert cluster_mfu(shape(100), ThroughputAssumptions())[0] == pytest.approx(0.24), "slow"
    assert cluster_mfu(shape(None), ThroughputAssumptions())[0] == pytest.approx(0.24), "unknown"


def test_mfu_override_and_notes() -> None:
    shape = ClusterShape(gpus_per_node=8, nodes=2, interconnect="pcie", network="roce",
                         offload=False)  # fmt: skip
    assert cluster_mfu(shape, ThroughputAssumptions(mfu_override=0.55)) == (
        0.55,
        ["MFU 0.55 (given)"],
    ), "an override replaces the whole model"
    mfu, notes = cluster_mfu(shape, ThroughputAssumptions())
    assert notes == ["MFU 0.40 base", "x0.75 PCIe-only GPUs", "x0.85 multi-node roce"], "notes"
    assert mfu == pytest.approx(0.255), "0.40 x 0.75 x 0.85"


def test_compute_hours() -> None:
    # 4.2e19 FLOPs / (8 GPUs x 989.4e12 x 0.40) = 4.2e19 / 3.16608e15 = 13265.6 s = 3.68489 h
    assert compute_hours(4.2e19, 8, 989.4, 0.40) == pytest.approx(4.2e19 / 3.16608e15 / 3600), (
        "formula"
    )
    assert compute_hours(4.2e19, 8, 989.4, 0.40) == pytest.approx(3.68489, rel=1e-5), "value"


def test_qlora_dequant_hours() -> None:
    # 1e9 tokens on 1 GPU, 4096 tokens per micro-step -> 244140.625 micro-steps;
    # 2 passes x 7e9 params x 5 B = 7e10 B per step -> 1.708984375e16 B;
    # at 3350 GB/s: 5101.45 s = 1.417069 h. With recompute: 3 passes -> x1.5.
    plain = qlora_dequant_hours(7e9, 1e9, 1, 4096, False, 3350.0, 5.0)
    assert plain == pytest.approx(1.708984375e16 / 3.35e12 / 3600), "two passes"
    again = qlora_dequant_hours(7e9, 1e9, 1, 4096, True, 3350.0, 5.0)
    assert again == pytest.approx(plain * 1.5), "a third pass under checkpointing"
    split = qlora_dequant_hours(7e9, 1e9, 4, 4096, False, 3350.0, 5.0)
    assert split == pytest.approx(plain / 4), "four GPUs each see a quarter of the steps"


@given(
    params=st.floats(min_value=1e6, max_value=1e12),
    adapters=st.floats(min_value=0, max_value=1e9),
    tokens=st.floats(min_value=1e3, max_value=1e13),
)
def test_lora_never_costs_more_flops_than_full(
    params: float, adapters: float, tokens: float
) -> None:
    adapters = min(adapters, params / 10)  # adapters are a small share of the model
    full = training_flops("full", params, params, tokens, False)
    lora = training_flops("lora", params, adapters, tokens, False)
    assert lora <= full, "frozen weights need no weight gradients"
    assert training_flops("full", params, params, tokens, True) > full, "recompute adds work"


@given(
    gpus_per_node=st.integers(min_value=1, max_value=16),
    nodes=st.integers(min_value=1, max_value=16),
    interconnect=st.sampled_from(["nvswitch", "nvlink", "pcie"]),
    network=st.sampled_from(["infiniband", "roce", "ethernet"]),
    offload=st.booleans(),
)
def test_mfu_never_exceeds_the_single_node_figure(
    gpus_per_node: int, nodes: int, interconnect: str, network: str, offload: bool
) -> None:
    shape = ClusterShape(
        gpus_per_node=gpus_per_node,
        nodes=nodes,
        interconnect=interconnect,
        network=network,
        offload=offload,
    )
    mfu, _ = cluster_mfu(shape, ThroughputAssumptions())
    assert 0 < mfu <= 0.40, "penalties only lower utilisation"
