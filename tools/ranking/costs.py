"""Money and interruption arithmetic for a training run: billing rounding, spot risk, checkpoints.

Units: time in hours unless a name says seconds; prices in USD per hour for ONE instance (node);
sizes in bytes; bandwidth in bytes per second.

Spot model (a first-order model, stated so it can be argued with):
- Each node is interrupted independently at `preemption_rate_per_hour`; a synchronous job stops when
  any node is lost, so the cluster rate is nodes x rate and its mean time between failures (MTBF) is
  the inverse of that.
- The job checkpoints every tau hours, tau from Young's formula sqrt(2 * C * MTBF) (J. W. Young,
  "A first order approximation to the optimum checkpoint interval", CACM 17(9), 1974; Daly 2006
  refines it with higher-order terms we do not need at these rates), capped at the run length.
- Checkpoint write time C = model-state bytes / (storage bandwidth x writing nodes): under ZeRO
  every node writes its shard in parallel; without sharding (one GPU, DDP) rank 0 writes it all.
- Each interruption loses half an interval of work on average and costs a restart (new instance,
  reload the checkpoint). Because interruptions also hit overhead time, the expected wall time W
  solves  W = T * (1 + C / tau) + (W / MTBF) * (tau / 2 + R).
- Billing rounding is applied once to the expected wall time of each node.
"""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict, Field

from tools.enums import Billing
from tools.errors import InvalidInputError

SECONDS_PER_HOUR = 3600.0
BILLING_UNIT_SECONDS: dict[str, float] = {"second": 1.0, "minute": 60.0, "hour": 3600.0}
# Float noise guard: 2.0000000001 billed minutes must stay 2 minutes, not 3.
_ROUNDING_SLACK = 1e-9

# Spot defaults: assumptions, not measurements; every one is a field the request can override.
DEFAULT_PREEMPTION_RATE_PER_HOUR = 0.05  # one interruption per 20 node-hours
DEFAULT_STORAGE_BANDWIDTH_BYTES_PER_S = 1e9  # 1 GB/s per node to a network volume/object store
DEFAULT_RESTART_HOURS = 10.0 / 60.0  # get a new instance, start the job, load the checkpoint
# Above this share of wall time spent recovering, a spot run is treated as impractical.
MAX_RECOVERY_SHARE = 0.5


class SpotAssumptions(BaseModel):
    """The stated spot-interruption assumptions (all overridable in a ranking request)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    preemption_rate_per_hour: float = Field(
        default=DEFAULT_PREEMPTION_RATE_PER_HOUR,
        ge=0,
        description="expected interruptions per node per hour (0.05 = one per 20 node-hours)",
    )
    storage_bandwidth_bytes_per_s: float = Field(
        default=DEFAULT_STORAGE_BANDWIDTH_BYTES_PER_S,
        gt=0,
        description="checkpoint write bandwidth per node, bytes per second (1e9 = 1 GB/s)",
    )
    restart_hours: float = Field(
        default=DEFAULT_RESTART_HOURS,
        ge=0,
        description="hours to replace an interrupted instance and resume from the checkpoint",
    )


class SpotRun(BaseModel):
    """Expected course of a spot run: wall time and where the extra time goes (hours)."""

    model_config = ConfigDict(frozen=True)

    compute_hours: float = Field(ge=0, description="uninterrupted training time, hours")
    wall_hours: float = Field(ge=0, description="expected wall time including every overhead")
    checkpoint_interval_hours: float | None = Field(
        description="Young/Daly interval between checkpoints; None when interruptions are off"
    )
    checkpoint_write_hours: float = Field(ge=0, description="time to write one checkpoint")
    expected_interruptions: float = Field(ge=0, description="expected count over the run")
    checkpoint_hours: float = Field(ge=0, description="total time spent writing checkpoints")
    lost_work_hours: float = Field(ge=0, description="total work redone after interruptions")
    restart_hours: float = Field(ge=0, description="total time spent restarting")

    @property
    def overhead_hours(self) -> float:
        """Expected hours beyond the compute time (checkpoints + lost work + restarts)."""
        return self.wall_hours - self.compute_hours


class SpotImpracticalError(InvalidInputError):
    """Interruptions come so often that the run spends most of its time recovering."""


def billed_seconds(run_seconds: float, granularity: Billing, min_charge_seconds: float) -> float:
    """Seconds a provider bills for one instance that ran `run_seconds`.

    Rounded up to whole billing units, then raised to the minimum charge.
    """
    if run_seconds < 0:
        raise InvalidInputError("run_seconds", run_seconds, "seconds >= 0")
    unit = BILLING_UNIT_SECONDS[granularity]
    units = math.ceil(run_seconds / unit - _ROUNDING_SLACK) if run_seconds > 0 else 0
    return max(units * unit, float(min_charge_seconds))


def billed_cost(
    hours: float,
    price_per_hour: float,
    granularity: Billing,
    min_charge_seconds: float,
    nodes: int = 1,
) -> float:
    """USD for `nodes` instances each running `hours`, billed one by one."""
    seconds = billed_seconds(hours * SECONDS_PER_HOUR, granularity, min_charge_seconds)
    return nodes * price_per_hour * seconds / SECONDS_PER_HOUR


def checkpoint_write_hours(
    state_bytes: float, storage_bandwidth_bytes_per_s: float, nodes: int
) -> float:
    """Hours to write one checkpoint of `state_bytes`, every node writing its share in parallel."""
    return state_bytes / (storage_bandwidth_bytes_per_s * nodes) / SECONDS_PER_HOUR


def young_daly_interval_hours(checkpoint_hours: float, mtbf_hours: float) -> float:
    """Young's optimal checkpoint interval sqrt(2 * C * MTBF), in hours."""
    return math.sqrt(2.0 * checkpoint_hours * mtbf_hours)


def expected_spot_run(
    compute_hours: float,
    state_bytes: float,
    nodes: int,
    assumptions: SpotAssumptions,
    writing_nodes: int | None = None,
    extra_rate_per_hour: float = 0.0,
) -> SpotRun:
    """Expected wall time of a spot run of `compute_hours` on `nodes` nodes, each interrupted
    independently. `writing_nodes` write the checkpoint in parallel (default: all `nodes`; 1 when
    one rank saves the whole state, as under DDP). `extra_rate_per_hour` adds interruptions per
    node-hour of another cause (hardware failures) to the preemption rate; with a zero
    preemption rate it models an on-demand run's failures alone."""
    writers = nodes if writing_nodes is None else writing_nodes
    if not 1 <= writers <= nodes:
        raise InvalidInputError("writing_nodes", writing_nodes, f"1 to the {nodes} node(s)")
    write_h = checkpoint_write_hours(
        state_bytes, assumptions.storage_bandwidth_bytes_per_s, writers
    )
    rate = (assumptions.preemption_rate_per_hour + extra_rate_per_hour) * nodes
    if rate == 0 or compute_hours == 0 or not math.isfinite(1.0 / rate):
        return SpotRun(
            compute_hours=compute_hours,
            wall_hours=compute_hours,
            checkpoint_interval_hours=None,
            checkpoint_write_hours=write_h,
            expected_interruptions=0.0,
            checkpoint_hours=0.0,
            lost_work_hours=0.0,
            restart_hours=0.0,
        )
    mtbf = 1.0 / rate
    # Checkpointing less than once per run gains nothing: cap the interval at the run length.
    tau = min(young_daly_interval_hours(write_h, mtbf), compute_hours)
    recovery_share = rate * (tau / 2.0 + assumptions.restart_hours)
    if recovery_share >= MAX_RECOVERY_SHARE:
        raise SpotImpracticalError(
            "preemption_rate_per_hour",
            assumptions.preemption_rate_per_hour,
            f"a rate at which recovery takes under {MAX_RECOVERY_SHARE:.0%} of the run"
            f" (here {recovery_share:.0%} on {nodes} node(s))",
        )
    checkpoint_h = compute_hours * write_h / tau if tau > 0 else 0.0
    wall = (compute_hours + checkpoint_h) / (1.0 - recovery_share)
    interruptions = wall * rate
    return SpotRun(
        compute_hours=compute_hours,
        wall_hours=wall,
        checkpoint_interval_hours=tau,
        checkpoint_write_hours=write_h,
        expected_interruptions=interruptions,
        checkpoint_hours=checkpoint_h,
        lost_work_hours=interruptions * tau / 2.0,
        restart_hours=interruptions * assumptions.restart_hours,
    )
