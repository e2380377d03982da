"""Training hours of a diffusion run: images x FLOPs at the GEMM rate, DDP all-reduce, MFU."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tools.gpus import lookup_gpu
from tools.ranking.time.assumptions import ThroughputAssumptions
from tools.ranking.time.comm import ClusterShape, Layout
from tools.ranking.time.image_step import ImageWork, image_run_time

WORK = ImageWork(
    method="lora", precision="bf16-mixed", flops_per_image=3e13, model_flops_per_image=2e13,
    micro_batch=1, accumulation=1, images=1000, total_params=3_000_000_000,
    trainable_params=20_000_000,
)  # fmt: skip
H100 = lookup_gpu("H100-SXM")


def _run(gpus: int, a: ThroughputAssumptions | None = None) -> float:
    shape = ClusterShape(gpus_per_node=gpus, nodes=1, interconnect="nvswitch", network="none")
    found = image_run_time(WORK, H100, shape, Layout(data=gpus), a or ThroughputAssumptions())
    assert found is not None
    return found.hours


def test_given_mfu_is_the_executed_flops_over_the_peak() -> None:
    a = ThroughputAssumptions(mfu_override=0.5)
    peak = H100.bf16_tflops * 1e12
    assert _run(1, a) == pytest.approx(1000 * 3e13 / (peak * 0.5) / 3600, rel=1e-12)


def test_compute_at_the_gemm_rate_and_ddp_divides_it() -> None:
    a = ThroughputAssumptions()
    rate = H100.bf16_tflops * 1e12 * a.gemm(H100.architecture)
    one = _run(1)
    assert one == pytest.approx(1000 * 3e13 / rate / 3600, rel=0.01), "optimizer step is small"
    assert _run(8) == pytest.approx(one / 8, rel=1e-9), "80 MB of gradients hide in backward"


def test_a_full_fine_tune_over_pcie_waits_for_its_all_reduce() -> None:
    full = replace(WORK, method="full", trainable_params=WORK.total_params)
    a = ThroughputAssumptions()
    times = []
    for link in ("nvswitch", "pcie"):
        shape = ClusterShape(gpus_per_node=2, nodes=1, interconnect=link, network="none")
        run = image_run_time(full, H100, shape, Layout(data=2), a)
        assert run is not None
        times.append(run)
    nvlink, pcie = times
    assert pcie.communication_hours > nvlink.communication_hours >= 0
    assert pcie.hours > nvlink.hours


def test_utilisation_counts_model_flops_only() -> None:
    shape = ClusterShape(gpus_per_node=1, nodes=1, interconnect="pcie", network="none")
    run = image_run_time(WORK, H100, shape, Layout(data=1), ThroughputAssumptions())
    assert run is not None
    peak = H100.bf16_tflops * 1e12
    assert run.utilisation == pytest.approx(1000 * 2e13 / (run.hours * 3600 * peak))
    assert run.recompute_hours == pytest.approx(run.compute_hours / 3, rel=1e-9)
