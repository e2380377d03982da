"""The estimator against measured training steps (benchmarks/memory_calibration).

Two layers of protection against drifting from measured reality:
- every stored CPU measurement (results/cpu.jsonl, exact MemTracker bytes of real optimizer
  steps) is re-estimated with the current estimator; this needs no torch and takes milliseconds;
- the quick subset is measured live (real models, real AdamW/SGD steps under MemTracker) and
  compared the same way; slow, a few seconds per case on two CPU cores.
Bounds (issue 7): the total within ±10 %, each part within ±15 % where it is above 5 % of the
measured total.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.memory_calibration.band import band_data
from benchmarks.memory_calibration.cases import QUICK, Case, cases
from benchmarks.memory_calibration.compare import CATEGORY_BOUND, TOTAL_BOUND, CaseResult, compare
from benchmarks.memory_calibration.measure import Measurement
from tools.memory.bands.calibration import calibration_band

RESULTS = Path(__file__).resolve().parents[4] / "benchmarks" / "memory_calibration" / "results"
STORED = RESULTS / "cpu.jsonl"


def stored_results() -> list[CaseResult]:
    lines = STORED.read_text(encoding="utf-8").splitlines()
    return [CaseResult.model_validate_json(line) for line in lines if line.strip()]


def assert_within_bounds(result: CaseResult) -> None:
    assert abs(result.error) <= TOTAL_BOUND, (
        f"{result.id}: estimated {result.estimated_peak:,} B vs measured "
        f"{result.measured_peak:,} B ({result.error:+.1%})"
    )
    for part, error in result.category_errors.items():
        if error is not None:
            assert abs(error) <= CATEGORY_BOUND, (
                f"{result.id}: {part} estimated {result.estimated_categories[part]:,} B vs "
                f"measured {result.measured_categories[part]:,} B ({error:+.1%})"
            )


def test_every_cpu_case_is_stored() -> None:
    ids = {r.id for r in stored_results()}
    missing = [c.id for c in cases("full") if c.id not in ids]
    assert not missing, f"run the harness for: {missing}"


@pytest.mark.parametrize("stored", stored_results(), ids=lambda r: r.id)
def test_stored_measurement_within_bounds(stored: CaseResult) -> None:
    """Re-estimate a stored measurement with the current estimator."""
    assert_within_bounds(compare(stored.case, stored.measured))


def test_band_file_is_the_stored_spread() -> None:
    """The band the estimator reports is the one the stored results give (not typed in)."""
    band = calibration_band()
    assert band is not None, "tools/data/memory_calibration.json is packaged"
    fresh = [compare(r.case, r.measured) for r in stored_results()]
    assert band.band == band_data(fresh)["band"], "re-run the harness with --write-band"
    assert band.cases == len(fresh), "one error per stored case"


def test_stored_lines_are_what_the_harness_writes() -> None:
    first = json.loads(STORED.read_text(encoding="utf-8").splitlines()[0])
    assert set(first) >= {
        "id",
        "case",
        "measured",
        "measured_peak",
        "measured_categories",
        "estimated_peak",
        "estimated_categories",
        "error",
        "accelerate_peak",
        "deepspeed_model_states",
    }, "config, measured and estimated peaks and parts, error, baselines"


@pytest.mark.slow
@pytest.mark.parametrize("case", QUICK, ids=lambda c: c.id)
def test_live_measurement_within_bounds(case: Case) -> None:
    """Measure the case now (real model, real optimizer steps, MemTracker) and compare."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    pytest.importorskip("peft")
    from benchmarks.memory_calibration.measure import measure_case

    measured: Measurement = measure_case(case)
    assert measured.step_totals[0] == measured.step_totals[-1], "steady state: equal step peaks"
    assert_within_bounds(compare(case, measured))
