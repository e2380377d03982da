"""Goodput of long runs: hardware failures stop a synchronous job, which restarts from its last
checkpoint.

Meta's Llama 3 pretraining saw 419 unexpected interruptions in a 54-day snapshot on up to
16,384 H100 GPUs (Dubey et al. 2024, "The Llama 3 Herd of Models", section 3.3.4 and Table 5),
about 2e-5 per GPU-hour, and kept "higher than 90% effective training time". Each GPU fails
independently, so a cluster's rate grows with its size; the expected course of a run follows the
same checkpoint/restart arithmetic as spot interruptions (`tools.ranking.costs`: Young's
interval, half an interval lost per failure, a restart each), at the failure rate on demand and
at the failure plus preemption rate on spot.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

LLAMA3_INTERRUPTIONS = 419
LLAMA3_GPU_HOURS = 54 * 24 * 16_384


class GoodputAssumptions(BaseModel):
    """The stated hardware-failure assumptions (overridable in a ranking request)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    failures_per_gpu_hour: float = Field(
        default=LLAMA3_INTERRUPTIONS / LLAMA3_GPU_HOURS,
        ge=0,
        description="unexpected job interruptions per GPU-hour (Llama 3: 419 in 54 days on"
        " 16,384 GPUs, 1.97e-5)",
    )


def failure_rate_per_node_hour(gpus_per_node: int, a: GoodputAssumptions) -> float:
    """Expected hardware interruptions per node-hour."""
    return a.failures_per_gpu_hour * gpus_per_node
