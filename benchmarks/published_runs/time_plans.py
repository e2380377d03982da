"""The parallel plan and the failure goodput the time benchmark uses for a published run.

Plans: the case's stated layout (`time_cases.stated_layout`), else the ranking's own plan search
(`tools.ranking.search.PlanSearch`) on exactly the case's GPUs, with the ranking's 10 % memory
margin; when nothing fits the estimator's memory there, ZeRO-3 over every GPU (marked
'assumed'). Goodput: the ranking's failure model (`tools.ranking.time.goodput`) over the whole
run, with the ranking's default checkpoint storage and restart time.
"""

from __future__ import annotations

from benchmarks.published_runs.time_cases import ThroughputCase, case_gpu, stated_layout
from tools.memory import EstimateInput, estimate
from tools.ranking.costs import SpotAssumptions, expected_spot_run
from tools.ranking.models import DEFAULT_MEMORY_MARGIN
from tools.ranking.plans import PlanFit, is_offload, zero_stage
from tools.ranking.prepare import checkpoint_bytes
from tools.ranking.search import PlanSearch
from tools.ranking.text import plan_text
from tools.ranking.time.comm import Layout
from tools.ranking.time.goodput import GoodputAssumptions, failure_rate_per_node_hour
from tools.units import GIB


def case_layout(case: ThroughputCase, job: EstimateInput, gpus: int) -> tuple[Layout, str]:
    """The layout for `case` on `gpus` GPUs and how it was chosen, in words."""
    found = stated_layout(case, gpus)
    if found is not None:
        return found, label(found) + " (stated)"
    per_node = min(case.gpu.gpus_per_node or 8, gpus)
    search = PlanSearch(job, DEFAULT_MEMORY_MARGIN, estimate)
    vram = case_gpu(case).vram_gib * GIB
    nodes = gpus // per_node
    fit = search.fit(per_node, vram, range(nodes, nodes + 1), None)
    if isinstance(fit, PlanFit):
        layout = Layout(
            data=fit.data_parallel,
            tensor=fit.tensor_parallel,
            pipeline=fit.pipeline_parallel,
            zero_stage=zero_stage(fit.plan),
            offload=is_offload(fit.plan),
        )
        return layout, plan_text(fit.plan, fit.tensor_parallel, fit.pipeline_parallel)
    layout = Layout(data=gpus, zero_stage=3)
    return layout, label(layout) + " (assumed: nothing fits)"


def label(layout: Layout) -> str:
    """'DP 32 ZeRO-3 TP 8', in the Megatron-LM style the cases state plans in."""
    parts = [f"DP {layout.data}"]
    if layout.zero_stage:
        parts.append(f"ZeRO-{layout.zero_stage}")
    if layout.tensor > 1:
        parts.append(f"TP {layout.tensor}")
    if layout.pipeline > 1:
        parts.append(f"PP {layout.pipeline}")
    if layout.offload:
        parts.append("offload")
    return " ".join(parts)


def whole_run_goodput(
    case: ThroughputCase, job: EstimateInput, layout: Layout, gpus: int, hours: float
) -> float:
    """Share of a whole run's expected wall time that trains, under hardware failures."""
    per_node = case.gpu.gpus_per_node or 8
    nodes = max(1, gpus // per_node)
    rate = failure_rate_per_node_hour(per_node, GoodputAssumptions())
    terms = SpotAssumptions(preemption_rate_per_hour=rate)
    state = checkpoint_bytes(job.model_copy(update={"engine": "deepspeed"}), estimate(job))
    writers = nodes if layout.zero_stage else 1
    run = expected_spot_run(hours, state, nodes, terms, writing_nodes=writers)
    return hours / run.wall_hours
