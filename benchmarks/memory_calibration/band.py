"""The estimator's uncertainty band, computed from calibration results (never typed in).

The band is the largest absolute relative error of the estimated peak over the calibration cases,
rounded up to a whole percent. It is written to tools/data/memory_calibration.json together with
how it was obtained; `tools.memory.estimator` loads it and reports each estimate as, e.g.,
"41.8 GiB (±6%)".
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Sequence
from datetime import date
from pathlib import Path

from benchmarks.memory_calibration.compare import CaseResult

BAND_FILE = Path(__file__).resolve().parents[2] / "tools" / "data" / "memory_calibration.json"


def band_data(results: Sequence[CaseResult]) -> dict[str, object]:
    """Summary statistics of the total errors, and the band derived from them."""
    errors = [r.error for r in results]
    if not errors:
        raise ValueError("no results to derive a band from")
    worst = max(abs(e) for e in errors)
    return {
        "band": math.ceil(worst * 100 - 1e-9) / 100,
        "rule": "largest absolute relative error of the total over the cases, rounded up to 1%",
        "cases": len(errors),
        "devices": sorted({r.case.device for r in results}),
        "mean_error": round(statistics.fmean(errors), 4),
        "stdev_error": round(statistics.pstdev(errors), 4),
        "min_error": round(min(errors), 4),
        "max_error": round(max(errors), 4),
        "measured_with": "torch.distributed._tools.mem_tracker.MemTracker (exact storage bytes)",
        "source": "benchmarks/memory_calibration (python -m benchmarks.memory_calibration.run "
        "--subset full --write-band)",
        "date": date.today().isoformat(),
    }


def write_band(results: Sequence[CaseResult], path: Path = BAND_FILE) -> Path:
    """Write the band file; returns its path."""
    path.write_text(json.dumps(band_data(results), indent=2) + "\n", encoding="utf-8")
    return path
