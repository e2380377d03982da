"""Ranking rules: screening reasons, plan order, node counts, ties, top-N, MoE, text."""

from __future__ import annotations

import gc
import importlib

import pytest

from tests.fakes.catalogs import instance
from tests.fakes.jobs import bare_input
from tests.tools.ranking.test_rank import (
    FULL_CATALOG,
    N1,
    ONE_GPU_SPOT,
    P7,
    QLORA_CATALOG,
    _full_1b_request,
    _full_70b_request,
    _qlora_request,
)
from tools.errors import UnknownNameError
from tools.memory import EstimateInput, MemoryBreakdown, MemoryEstimate, estimate
from tools.memory.results import ReportedFigures
from tools.ranking import RankingAssumptions, RankRequest, RankResult, Workload, rank
from tools.ranking.plans import EstimateFn, NoFit, PlanFit, plan_engine, plan_input
from tools.ranking.search import PlanSearch
from tools.ranking.time.assumptions import ThroughputAssumptions
from tools.ranking.time.flops import block_linear_params
from tools.units import GIB

rank_module = importlib.import_module("tools.ranking.rank")  # the package exports `rank` itself


def _excluded(result: RankResult) -> dict[str, tuple[str, str]]:
    return {e.instance_id: (e.kind, e.reason) for e in result.excluded}


def test_screening_reasons() -> None:
    catalog = [
        instance("a", "L4", 1, 0.8, regions=["eu-west"]),
        instance("b", "L4", 8, 6.0, interconnect="pcie"),
        instance("c", "H100-SXM", 1, 3.0),
        instance("d", "H100-SXM", 4, 12.0, interconnect="nvlink"),
    ]
    result = rank(_qlora_request(regions=["us-east"], max_gpus=4, max_price_per_hour=10,
                                 interconnect="nvlink"), catalog)  # fmt: skip
    assert _excluded(result) == {
        "testcloud/a": ("region", "not offered in us-east"),
        "testcloud/b": ("gpu_count", "has 8 GPUs per node, more than the maximum of 4"),
        "testcloud/c": ("interconnect", "interconnect is pcie; nvlink required"),
        "testcloud/d": ("price", "over max price: $12.00/h > $10.00/h"),
    }, "each constraint names itself"


def test_nvlink_requirement_accepts_nvswitch_and_min_gpus() -> None:
    catalog = [instance("sxm8", "H100-SXM", 8, 24.0), instance("one", "H100-SXM", 1, 3.0)]
    result = rank(_qlora_request(interconnect="nvlink", min_gpus=8), catalog)
    assert [r.instance_id for r in result.ranked] == ["testcloud/sxm8"], "NVSwitch is NVLink"
    assert _excluded(result) == {
        "testcloud/one": (
            "gpu_count",
            "has 1 GPU and is not sold as multi-node clusters; at least 8 wanted",
        )
    }, "min GPUs on a single-node shape"


def test_providers_filter_and_unknown_provider() -> None:
    catalog = [*QLORA_CATALOG, instance("x", "L4", 1, 0.1, provider="othercloud")]
    result = rank(_qlora_request(providers=["TestCloud"]), catalog)
    assert _excluded(result) == {
        "othercloud/x": ("provider", "provider othercloud not requested")
    }, "case-insensitive provider filter"
    with pytest.raises(UnknownNameError, match=r"unknown provider 'nosuch'"):
        rank(_qlora_request(providers=["nosuch"]), catalog)


def test_spot_required_and_no_spot_offer() -> None:
    result = rank(_qlora_request(spot="required"), QLORA_CATALOG)
    assert [(r.instance_id, r.pricing) for r in result.ranked] == [("testcloud/h100-1x", "spot")]
    assert {e.reason for e in result.excluded} == {"no spot offer"}, "two without spot"


def test_impractical_spot_is_explained() -> None:
    request = _qlora_request(spot="required")
    request.assumptions.spot = request.assumptions.spot.model_copy(
        update={"preemption_rate_per_hour": 5.0}
    )
    result = rank(request, QLORA_CATALOG[1:2])
    kind, reason = _excluded(result)["testcloud/h100-1x"]
    assert kind == "spot", "spot cannot be used"
    assert reason.startswith("spot impractical: preemption_rate_per_hour: got 5.0"), reason


def test_ties_break_on_instance_id_and_top() -> None:
    catalog = [instance(name, "L4", 1, 0.8) for name in ("zz", "mm", "aa")]
    result = rank(_qlora_request(), catalog)
    assert [r.instance_id for r in result.ranked] == [
        "testcloud/aa",
        "testcloud/mm",
        "testcloud/zz",
    ], "identical offers ordered by id"
    assert [r.rank for r in result.ranked] == [1, 2, 3], "ranks count from 1"
    top = rank(_qlora_request().model_copy(update={"top": 1}), catalog)
    assert [r.instance_id for r in top.ranked] == ["testcloud/aa"], "top 1"
    assert top.feasible == 3, "feasible counts every qualifying instance"


def test_pcie_multi_gpu_full_can_be_allowed() -> None:
    request = _full_70b_request()
    request.assumptions = RankingAssumptions(allow_pcie_multi_gpu_full=True)  # the whole model
    pcie = [instance("l40s-8x-pcie", "L40S", 8, 9.0, interconnect="pcie", ram_gib=2048)]
    row = rank(request, pcie).ranked[0]
    # 48 GiB cards: only ZeRO-3 with the optimizer offloaded fits on one node
    assert row.plan == "zero3_offload", "offload plan"

    def hours(cpu_gbs: float) -> float:
        changed = request.model_copy(deep=True)
        changed.assumptions.throughput = ThroughputAssumptions(cpu_optimizer_gbs=cpu_gbs)
        return rank(changed, pcie).ranked[0].training_hours

    # the CPU's optimizer step is what the offload adds: it scales with 1 / host bandwidth
    assert row.training_hours == pytest.approx(hours(20.0)), "the default host bandwidth"
    instant = hours(1e12)
    assert row.training_hours - instant == pytest.approx(2 * (hours(40.0) - instant), rel=1e-6)


def test_max_gpus_caps_the_cluster_and_offload_comes_last() -> None:
    # 70B full fine-tune with at most 16 GPUs: ZeRO-3 fails on 1 and 2 nodes (see the golden
    # test), so the optimizer is offloaded on the smallest cluster that then fits: one node.
    result = rank(_full_70b_request(max_gpus=16), FULL_CATALOG[:1])
    row = result.ranked[0]
    assert (row.plan, row.nodes) == ("zero3_offload", 1), "offload after all clusters failed"
    assert (row.tensor_parallel, row.pipeline_parallel) == (1, 1), "no fitting model parallelism"


def test_min_gpus_starts_the_cluster_larger() -> None:
    result = rank(_full_70b_request(min_gpus=32), FULL_CATALOG[:1])
    row = result.ranked[0]
    assert (row.plan, row.nodes, row.gpu_count) == ("zero3", 4, 32), "4 nodes of 8"


def test_moe_uses_active_parameters() -> None:
    request = RankRequest(
        job=bare_input(model="mistralai/Mixtral-8x7B-v0.1", method="full"),
        workload=Workload(tokens=1e9),
    )
    job = rank(request, []).job
    model = request.job.model
    assert job.active_params < job.total_params, "2 of 8 experts per token"
    # Mixtral: 32 layers x (attention 2 x 4096^2 + 2 x 4096 x 1024 + router 4096 x 8 + 2 of 8
    # experts x 3 x 4096 x 14336) = 32 x (41,943,040 + 32,768 + 352,321,536) = 12,617,515,008
    active_linear = block_linear_params(model)
    assert active_linear == 12_617_515_008, "the active experts' and the router's linears"
    per_token = 6 * active_linear + 6 * 32_000 * 4096 + 3 * 4 * 2048 * 4096 * 32 // 2
    assert job.training_flops == pytest.approx(per_token * 1e9, rel=1e-12), "FLOPs per token"


def test_ranked_reasons_text() -> None:
    row = rank(_qlora_request(spot="allowed"), QLORA_CATALOG).ranked[0]
    assert row.reasons[1:] == [
        "6.2 h training at MFU 0.27 of 989.4 BF16 TFLOPS per GPU (incl. 0.2 h QLoRA"
        " de-quantization) + 0.00 h setup",
        "on-demand $18.75 billed per minute; spot $7.60 expected (0.3 interruptions,"
        " checkpoint every 0.07 h)",
        "price from test catalog as of 2026-01-15",
    ], "speed, cost and provenance lines"
    assert row.reasons[0].startswith("single GPU (H100-SXM): needs 10."), row.reasons[0]
    cluster = rank(_full_70b_request(), FULL_CATALOG).ranked[0]
    # 61,907,033,805 B (worked out in test_full_70b_needs_three_nodes) = 57.65 GiB;
    # spare = 80 / 57.65 - 1 = 38.8 %
    assert cluster.reasons[0] == (
        "ZeRO-3/FSDP on 24 x H100-SXM (3 nodes of 8 over infiniband): needs 57.7 GiB of 80.0 GiB"
        " per GPU (39% spare)"
    ), cluster.reasons[0]


def test_zero_plans_are_sized_as_deepspeed_runs_them() -> None:
    # The estimator's pytorch engine under ZeRO-3 keeps autocast's 16-bit copy of every weight
    # unsharded (2 N = 131 GiB for 70B), which FSDP does not: the ranking sizes every ZeRO plan
    # as DeepSpeed runs it, whatever the job's engine; single GPU and DDP follow the job.
    pytorch = _full_70b_request().job.model_copy(update={"engine": "pytorch"})
    assert "engine" in pytorch.model_fields_set, "the engine is the user's"
    assert plan_engine(pytorch, "single") == "pytorch", "one GPU: the job's engine"
    assert plan_engine(pytorch, "ddp") == "pytorch", "DDP: the job's engine"
    for plan in ("zero2", "zero3", "zero3_offload", "single_offload"):
        assert plan_engine(pytorch, plan) == "deepspeed", f"{plan}: DeepSpeed"
    need = estimate(plan_input(pytorch, "zero3", 24)).per_gpu.total
    assert need == 61_907_033_805, "as test_full_70b_needs_three_nodes works it out"
    deepspeed = _full_1b_request().job.model_copy(update={"engine": "deepspeed"})
    assert plan_engine(deepspeed, "single") == "deepspeed", "a DeepSpeed job on one GPU"
    request = _full_1b_request(spot="required").model_copy(update={"job": deepspeed})
    row = rank(request, ONE_GPU_SPOT).ranked[0]
    # DeepSpeed keeps a 16-bit model (2 N) and the fp32 master with AdamW's moments (12 N)
    assert (row.plan, row.checkpoint_bytes) == ("single", 14 * N1), "DeepSpeed checkpoint, 1 GPU"


def test_lora_checkpoint_follows_the_adapter_width() -> None:
    # Pure bf16: PEFT keeps the adapters in bf16 (2 B) and AdamW's moments are bf16 (2 x 2 B):
    # 6 B per adapter parameter; the default bf16-mixed keeps fp32 adapters: 4 + 8 = 12 B.
    # A stated 4 B per adapter parameter overrides the width: 4 + 4 = 8 B under pure bf16.
    job = bare_input(model="meta-llama/Llama-2-7b-hf", method="lora", precision="bf16")
    request = RankRequest(job=job, workload=Workload(tokens=1e8))
    assert rank(request, []).job.checkpoint_bytes == 6 * P7, "bf16 adapters and moments"
    request.assumptions.adapter_bytes_per_param = 4.0
    assert rank(request, []).job.checkpoint_bytes == 8 * P7, "4 B adapters, bf16 moments"
    assert rank(_qlora_request(), []).job.checkpoint_bytes == 12 * P7, "fp32 adapters"


def test_engine_and_checkpoint_assumptions_are_stated() -> None:
    lines = rank(_full_70b_request(), []).job.assumptions
    assert (
        "engines: single GPU and DDP sized as PyTorch runs them (torch.autocast over fp32"
        " weights); ZeRO-2, ZeRO-3/FSDP and offload plans as DeepSpeed does (16-bit weights and"
        " gradients, fp32 master in the optimizer) whatever the job's engine, as the estimator's"
        " PyTorch engine keeps autocast's 16-bit weight copies unsharded; FSDP with mixed"
        " precision shards as many bytes per parameter under AdamW (4 + 4 + 8 against 2 + 2 + 12)"
    ) in lines, "which engine sizes which plan"
    assert (
        "spot checkpoints hold the trainable weights and the optimizer state: 12 B per trainable"
        " parameter under PyTorch (single GPU and DDP: rank 0 writes it alone), 14 B per"
        " trainable parameter under DeepSpeed (ZeRO-2, ZeRO-3/FSDP and offload plans: every node"
        " writes its shard)"
    ) in lines, "what a checkpoint holds under each engine"
    lora = rank(_qlora_request(), []).job.assumptions
    assert any("12 B per trainable parameter under PyTorch (single" in line for line in lora), (
        "LoRA: fp32 adapters + moments, no master under either engine"
    )


def _fake_estimate(model_bytes: float) -> EstimateFn:
    """An estimator stand-in: `model_bytes` of state, divided as ZeRO divides it, +1 GiB."""
    template = estimate(bare_input(model="7e9"))

    def fake(inp: EstimateInput) -> MemoryEstimate:
        share = {0: 1.0, 2: 0.5, 3: 1.0 / inp.num_gpus}[inp.zero_stage]
        if inp.zero_stage == 2:
            share = 0.25 + 0.75 / inp.num_gpus  # weights stay whole, the rest is sharded
        on_gpu = model_bytes * share * (0.25 if inp.offload_optimizer else 1.0)
        total = int(on_gpu + GIB)
        parts = MemoryBreakdown(weights=total, gradients=0, optimizer=0, activations=0,
                                overhead=0, total=total)  # fmt: skip
        figures = ReportedFigures(allocated=total, reserved=total, device=total, evictable=0,
                                  required=total)  # fmt: skip
        return template.model_copy(
            update={"per_gpu": parts, "figures": figures, "cpu_offload_bytes": 0}
        )

    return fake


@pytest.mark.parametrize(
    ("model_gib", "expected"),
    [
        (50, ("ddp", 1)),  # 51 GiB x 1.1 = 56.1 <= 80
        (100, ("zero2", 1)),  # DDP 101 too big; ZeRO-2: 100 x (0.25 + 0.75/8) + 1 = 35.4
        (400, ("zero3", 1)),  # ZeRO-2 101 too big; ZeRO-3: 400/8 + 1 = 51 -> 56.1
        (1000, ("zero3", 2)),  # one node: 126 GiB; two nodes: 1000/16 + 1 = 63.5 -> 69.9
        # ZeRO-3 on 4 nodes: 3000/32 + 1 = 94.75 GiB; offload (a quarter stays on the GPUs):
        # 1 node 3000 x 0.25 / 8 + 1 = 94.75 GiB, 2 nodes 3000 x 0.25 / 16 + 1 = 47.9 -> 52.7
        (3000, ("zero3_offload", 2)),
    ],
)
def test_plan_order_with_a_fake_estimator(model_gib: int, expected: tuple[str, int]) -> None:
    job = bare_input(model="7e9", method="full")
    search = PlanSearch(job, 0.10, _fake_estimate(model_gib * GIB))
    found = search.fit(8, 80 * GIB, range(1, 5), None)
    assert isinstance(found, PlanFit), f"{model_gib} GiB fits somewhere"
    assert (found.plan, found.nodes) == expected, f"{model_gib} GiB of model state"


def test_nothing_fits_reports_the_smallest_need() -> None:
    job = bare_input(model="7e9", method="full")
    search = PlanSearch(job, 0.10, _fake_estimate(10_000 * GIB))
    found = search.fit(8, 80 * GIB, range(1, 3), None)
    # smallest: offload on 2 nodes: 10000 x 0.25 / 16 + 1 = 157.25 GiB
    assert found == NoFit(int(157.25 * GIB), "zero3_offload", 16, False), "closest miss"


def test_exclusions_keep_catalog_order_and_share_reasons() -> None:
    catalog = [instance(f"l4-{i}", "L4", 1, 0.5 + i) for i in range(3)]
    catalog.append(instance("a10g", "A10G", 1, 1.0))
    result = rank(_full_70b_request(), catalog)
    assert [(e.instance_id, e.gpu) for e in result.excluded] == [
        ("testcloud/l4-0", "L4"),
        ("testcloud/l4-1", "L4"),
        ("testcloud/l4-2", "L4"),
        ("testcloud/a10g", "A10G"),
    ], "one entry per instance, catalog order"
    assert len({e.reason for e in result.excluded}) == 1, "same 24 GiB shape, same reason"
    assert result.feasible == 0 and result.considered == 4, "counts"


def test_tensor_parallel_jobs() -> None:
    # TP 2: a 1-GPU instance cannot host it; on 8 GPUs the data-parallel degree is 4.
    request = _qlora_request()
    request.job = request.job.model_copy(update={"tensor_parallel": 2})
    catalog = [instance("one", "H100-SXM", 1, 3.0), instance("eight", "H100-SXM", 8, 24.0)]
    result = rank(request, catalog)
    assert _excluded(result) == {
        "testcloud/one": ("gpu_count", "tensor_parallel 2 needs a multiple of 2 GPUs")
    }, "odd GPU counts"
    row = result.ranked[0]
    assert (row.plan, row.gpu_count) == ("ddp", 8), "DDP over 4 pairs"
    assert row.plan_label == "DDP + tensor parallel 2", "label names both"
    assert row.reasons[0].startswith("DDP + tensor parallel 2 on 8 x H100-SXM: needs"), row.reasons
    # the checkpoint is still the whole adapter state: 12 B x 39,976,960
    assert result.job.checkpoint_bytes == 12 * 39_976_960, "TP does not change the state size"


def test_only_large_catalogs_pause_the_cycle_collector(monkeypatch: pytest.MonkeyPatch) -> None:
    def collector_states() -> tuple[EstimateFn, list[bool]]:
        """A new estimator (so nothing is reused from another ranking) and what it saw."""
        seen: list[bool] = []

        def watching(inp: EstimateInput) -> MemoryEstimate:
            seen.append(gc.isenabled())
            return estimate(inp)

        return watching, seen

    catalog = [*QLORA_CATALOG, instance("eight", "H100-SXM", 8, 24.0)]  # DDP: in the loop
    small, seen = collector_states()
    rank(_qlora_request(), catalog, small)
    assert len(seen) > 2 and all(seen), "a small catalog is ranked with the collector on"
    monkeypatch.setattr(rank_module, "GC_PAUSE_ROWS", len(catalog))
    large, seen = collector_states()
    rank(_qlora_request(), catalog, large)
    # the job's own estimates come before the rows, the 8-GPU plan's inside the row loop
    assert seen[0] and not seen[-1], "a catalog of GC_PAUSE_ROWS rows is ranked paused"
    assert gc.isenabled(), "and re-enabled after it"


def test_the_cycle_collector_state_is_restored(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rank_module, "GC_PAUSE_ROWS", 1)  # every catalog pauses it
    assert gc.isenabled(), "pytest runs with the collector on"
    rank(_qlora_request(), QLORA_CATALOG)
    assert gc.isenabled(), "re-enabled after a ranking"

    def fails_on_many_gpus(inp: EstimateInput) -> MemoryEstimate:
        if inp.num_gpus > 1:  # reached inside the row loop, for the 8-GPU shape
            raise RuntimeError("estimator broke")
        return estimate(inp)

    with pytest.raises(RuntimeError, match="estimator broke"):
        rank(_qlora_request(), [instance("eight", "H100-SXM", 8, 24.0)], fails_on_many_gpus)
    assert gc.isenabled(), "re-enabled after an error inside the loop"
    gc.disable()
    try:
        rank(_qlora_request(), QLORA_CATALOG)
        assert not gc.isenabled(), "a caller's disabled collector stays disabled"
    finally:
        gc.enable()
