"""The parallel plan and the failure goodput the time benchmark uses for a published run."""

from __future__ import annotations

from benchmarks.published_runs.time_cases import ThroughputCase, stated_layout
from tools.memory import EstimateInput
from tools.ranking.time.comm import Layout


def case_layout(case: ThroughputCase, job: EstimateInput, gpus: int) -> tuple[Layout, str]:
    """The stated layout, else ZeRO-3 over every GPU (placeholder until the plan search)."""
    found = stated_layout(case, gpus)
    if found is not None:
        return found, _label(found)
    layout = Layout(data=gpus, zero_stage=3)
    return layout, _label(layout) + " (assumed)"


def _label(layout: Layout) -> str:
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


def whole_run_goodput(case: ThroughputCase, job: EstimateInput, gpus: int, hours: float) -> float:
    """Share of a whole run's wall time spent training (placeholder: 1)."""
    return 1.0
