"""The estimator's uncertainty band, as measured by the calibration harness.

`benchmarks/memory_calibration` runs real training steps, compares each measured peak with the
estimate and writes the spread of the errors to tools/data/memory_calibration.json (`python -m
benchmarks.memory_calibration.run --subset full --write-band`). Nothing here is typed in: the
band is whatever that run measured. Without the file there is no band.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources

from pydantic import BaseModel, ConfigDict, Field, ValidationError

BAND_FILE = "data/memory_calibration.json"


class CalibrationBand(BaseModel):
    """The spread of (estimated - measured) / measured over the calibration cases."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    band: float = Field(ge=0, lt=1, description="largest absolute relative error, rounded up")
    cases: int = Field(gt=0)
    devices: list[str]
    mean_error: float
    stdev_error: float
    source: str
    date: str


@cache
def calibration_band() -> CalibrationBand | None:
    """The band stored with the package, or None when the file is absent or unreadable."""
    try:
        text = resources.files("tools").joinpath(BAND_FILE).read_text(encoding="utf-8")
        return CalibrationBand.model_validate(json.loads(text))
    except (FileNotFoundError, json.JSONDecodeError, ValidationError):
        return None
