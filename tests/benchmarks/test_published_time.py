"""The time model against the published throughputs in ../shared (skipped without it): the
targets of benchmarks/published_runs/time.py, on the runs the file marks 'ok' (its torchtune
rows are 'suspect': their implied utilisation is physically implausible, scored apart)."""

from __future__ import annotations

from pathlib import Path

from benchmarks.published_runs.time import Prediction, run, within


def _rows(shared_dir: Path) -> list[Prediction]:
    return run(shared_dir)


def test_time_model_meets_its_targets(shared_dir: Path) -> None:
    rows = _rows(shared_dir)
    ok = [r for r in rows if r.quality == "ok"]
    assert len(ok) >= 19, f"the file's 'ok' runs: {len(ok)}"
    misses = {r.id: round(r.ratio, 2) for r in ok if abs(r.ratio - 1) > 0.25}
    assert within(ok, 0.25) >= 0.70, f"within ±25 %: {within(ok, 0.25):.0%}; misses {misses}"
    assert within(ok, 0.50) >= 0.90, f"within ±50 %: {within(ok, 0.50):.0%}; misses {misses}"
    assert within(rows, 0.25) >= 0.70, f"all runs within ±25 %: {within(rows, 0.25):.0%}"


def test_every_run_is_predicted_with_a_plan(shared_dir: Path) -> None:
    for row in _rows(shared_dir):
        assert row.predicted > 0 and row.published > 0, row.id
        assert row.plan, f"{row.id}: the plan it was timed on"
        if row.utilisation is not None:
            assert 0 < row.utilisation < 1, f"{row.id}: utilisation {row.utilisation}"
