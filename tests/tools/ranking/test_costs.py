"""Billing rounding, minimum charges and the spot-interruption model, checked by hand."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, reject
from hypothesis import strategies as st

from tools.errors import InvalidInputError
from tools.ranking.costs import (
    SpotAssumptions,
    SpotImpracticalError,
    billed_cost,
    billed_seconds,
    checkpoint_write_hours,
    expected_spot_run,
    young_daly_interval_hours,
)


@pytest.mark.parametrize(
    ("run_seconds", "granularity", "min_charge", "expected"),
    [
        (3601, "hour", 0, 7200),  # one second into the second hour bills the whole hour
        (3601, "minute", 0, 3660),  # 60 min + 1 s -> 61 minutes
        (3601, "second", 0, 3601),
        (30, "second", 60, 60),  # a 60 s minimum charge wins over 30 s of use
        (90, "minute", 600, 600),  # 2 minutes billed, raised to the 10-minute minimum
        (0, "hour", 0, 0),
        (7200.0000001, "hour", 0, 7200),  # float noise does not add an hour
        (2 * 60 * 1.0000000001, "minute", 0, 120),
    ],
)
def test_billed_seconds(
    run_seconds: float, granularity: str, min_charge: int, expected: float
) -> None:
    got = billed_seconds(run_seconds, granularity, min_charge)  # type: ignore[arg-type]
    assert got == expected, f"{run_seconds}s billed per {granularity}, min {min_charge}s"


def test_billed_seconds_rejects_negative_time() -> None:
    with pytest.raises(ValueError, match=r"run_seconds: got -1; valid: seconds >= 0"):
        billed_seconds(-1, "second", 0)


def test_billed_cost_bills_every_node() -> None:
    # 1.5 h per hour -> 2 billed hours per node; 2 nodes x 2 h x $10 = $40
    assert billed_cost(1.5, 10.0, "hour", 0, nodes=2) == pytest.approx(40.0), "hourly, 2 nodes"
    # per second: 1.5 h x $10 x 2 nodes = $30
    assert billed_cost(1.5, 10.0, "second", 0, nodes=2) == pytest.approx(30.0), "per second"
    # 6 minutes of a 1-hour-minimum offer at $8/h costs one hour: $8
    assert billed_cost(0.1, 8.0, "second", 3600) == pytest.approx(8.0), "minimum charge"


def test_checkpoint_write_and_young_daly() -> None:
    # 112 GB at 1 GB/s = 112 s; two nodes write half each: 56 s
    assert checkpoint_write_hours(112e9, 1e9, 1) == pytest.approx(112 / 3600), "one node"
    assert checkpoint_write_hours(112e9, 1e9, 2) == pytest.approx(56 / 3600), "two nodes"
    # sqrt(2 x 0.02 h x 10 h) = sqrt(0.4) = 0.63246 h
    assert young_daly_interval_hours(0.02, 10.0) == pytest.approx(math.sqrt(0.4)), "interval"


def test_expected_spot_run_golden() -> None:
    # C = 180e9 B / 1e9 B/s = 180 s = 0.05 h; rate 0.1/h -> MTBF 10 h;
    # tau = sqrt(2 x 0.05 x 10) = 1 h; R = 0.25 h; recovery share = 0.1 x (0.5 + 0.25) = 0.075;
    # checkpoints = 10 h x 0.05 / 1 = 0.5 h; W = (10 + 0.5) / 0.925 = 11.351351 h;
    # interruptions = 0.1 x W = 1.1351351; lost = 1.1351351 x 0.5 = 0.5675676 h;
    # restarts = 1.1351351 x 0.25 = 0.2837838 h; 10 + 0.5 + 0.5675676 + 0.2837838 = W.
    assumptions = SpotAssumptions(
        preemption_rate_per_hour=0.1, storage_bandwidth_bytes_per_s=1e9, restart_hours=0.25
    )
    run = expected_spot_run(10.0, 180e9, 1, assumptions)
    assert run.checkpoint_write_hours == pytest.approx(0.05), "C"
    assert run.checkpoint_interval_hours == pytest.approx(1.0), "Young/Daly tau"
    assert run.checkpoint_hours == pytest.approx(0.5), "checkpoint time"
    assert run.wall_hours == pytest.approx(10.5 / 0.925), "wall time"
    assert run.expected_interruptions == pytest.approx(0.1 * 10.5 / 0.925), "interruptions"
    assert run.lost_work_hours == pytest.approx(0.05 * 10.5 / 0.925), "lost work"
    assert run.restart_hours == pytest.approx(0.025 * 10.5 / 0.925), "restart time"
    assert run.overhead_hours == pytest.approx(10.5 / 0.925 - 10), "overhead"


def test_expected_spot_run_two_nodes() -> None:
    # two nodes: C = 0.025 h, cluster rate 0.2/h -> MTBF 5 h; tau = sqrt(2 x 0.025 x 5) = 0.5 h;
    # share = 0.2 x (0.25 + 0.25) = 0.1; checkpoints = 10 x 0.025 / 0.5 = 0.5 h; W = 10.5 / 0.9
    assumptions = SpotAssumptions(preemption_rate_per_hour=0.1, restart_hours=0.25)
    run = expected_spot_run(10.0, 180e9, 2, assumptions)
    assert run.checkpoint_interval_hours == pytest.approx(0.5), "tau on two nodes"
    assert run.wall_hours == pytest.approx(10.5 / 0.9), "wall time on two nodes"


def test_one_writer_on_two_nodes() -> None:
    # DDP: rank 0 writes the whole 180 GB alone: C = 0.05 h while both nodes can be interrupted
    # (MTBF 5 h); tau = sqrt(2 x 0.05 x 5) = 0.7071068 h; share = 0.2 x (0.3535534 + 0.25)
    # = 0.1207107; checkpoints = 10 x 0.05 / 0.7071068 = 0.7071068 h;
    # W = 10.7071068 / 0.8792893 = 12.1770008 h.
    assumptions = SpotAssumptions(preemption_rate_per_hour=0.1, restart_hours=0.25)
    run = expected_spot_run(10.0, 180e9, 2, assumptions, writing_nodes=1)
    assert run.checkpoint_write_hours == pytest.approx(0.05), "one node writes it all"
    assert run.checkpoint_interval_hours == pytest.approx(math.sqrt(0.5)), "tau"
    assert run.wall_hours == pytest.approx(12.1770008, rel=1e-7), "wall time, one writer"
    with pytest.raises(InvalidInputError, match=r"writing_nodes: got 3; valid: 1 to the 2 node"):
        expected_spot_run(10.0, 180e9, 2, assumptions, writing_nodes=3)


def test_no_interruptions_means_no_overhead() -> None:
    run = expected_spot_run(7.0, 1e12, 4, SpotAssumptions(preemption_rate_per_hour=0))
    assert run.wall_hours == 7.0, "rate 0: wall = compute"
    assert run.checkpoint_interval_hours is None, "rate 0: no interval"


def test_impractical_spot_rate_is_an_error() -> None:
    # rate 2/h: share = 2 x (tau/2 + 0.25) >= 0.5 already from the restarts
    assumptions = SpotAssumptions(preemption_rate_per_hour=2.0, restart_hours=0.25)
    with pytest.raises(SpotImpracticalError, match=r"preemption_rate_per_hour: got 2\.0"):
        expected_spot_run(10.0, 1e9, 1, assumptions)


@given(
    seconds=st.floats(min_value=0, max_value=1e7, allow_nan=False),
    granularity=st.sampled_from(["second", "minute", "hour"]),
    minimum=st.integers(min_value=0, max_value=7200),
)
def test_billing_never_undercharges(seconds: float, granularity: str, minimum: int) -> None:
    billed = billed_seconds(seconds, granularity, minimum)  # type: ignore[arg-type]
    unit = {"second": 1, "minute": 60, "hour": 3600}[granularity]
    assert billed >= minimum, "at least the minimum charge"
    assert billed >= seconds - 1e-6 * unit, "at least the time used"
    assert billed < max(seconds + unit, minimum + 1), "less than one extra unit"


@given(
    a=st.floats(min_value=0, max_value=1e4, allow_nan=False),
    b=st.floats(min_value=0, max_value=1e4, allow_nan=False),
    granularity=st.sampled_from(["second", "minute", "hour"]),
)
def test_billed_cost_is_monotone_in_hours(a: float, b: float, granularity: str) -> None:
    lo, hi = sorted((a, b))
    assert billed_cost(lo, 3.0, granularity, 60) <= billed_cost(hi, 3.0, granularity, 60)  # type: ignore[arg-type]


@given(
    hours=st.floats(min_value=0.01, max_value=1e4),
    state=st.floats(min_value=1e6, max_value=2e12),
    nodes=st.integers(min_value=1, max_value=8),
    rate=st.floats(min_value=0, max_value=0.2),
)
def test_spot_wall_time_is_at_least_compute_time(
    hours: float, state: float, nodes: int, rate: float
) -> None:
    try:
        run = expected_spot_run(hours, state, nodes, SpotAssumptions(preemption_rate_per_hour=rate))
    except SpotImpracticalError:
        reject()  # recovery would take over half the run: refused, which is not a shorter run
    assert run.wall_hours >= hours, "interruptions never make a run shorter"
    parts = hours + run.checkpoint_hours + run.lost_work_hours + run.restart_hours
    assert parts == pytest.approx(run.wall_hours), "the overhead parts add up to the wall time"


def test_interval_is_capped_at_the_run_length() -> None:
    # Young: sqrt(2 x 0.05 x 10) = 1 h, but the run is only 0.5 h long -> tau = 0.5 h;
    # checkpoints = 0.5 x 0.05 / 0.5 = 0.05 h; share = 0.1 x (0.25 + 0.25) = 0.05;
    # W = 0.55 / 0.95
    assumptions = SpotAssumptions(preemption_rate_per_hour=0.1, restart_hours=0.25)
    run = expected_spot_run(0.5, 180e9, 1, assumptions)
    assert run.checkpoint_interval_hours == pytest.approx(0.5), "interval capped"
    assert run.wall_hours == pytest.approx(0.55 / 0.95), "wall time with the capped interval"
