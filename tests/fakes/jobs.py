"""The bare training setup the estimator's and the ranking's mechanism tests start from.

The job defaults (`tools.job.defaults`) are what a user gets; a test of one mechanism states
every setting it relies on instead, so a changed default cannot move its golden figures: every
weight trained, no recomputation, plain AdamW, unless the test says otherwise.
"""

from __future__ import annotations

from typing import Any

from tools.memory import EstimateInput

BARE: dict[str, Any] = {"method": "full", "gradient_checkpointing": "none", "optimizer": "adamw"}


def bare_input(**settings: Any) -> EstimateInput:
    """An EstimateInput of `settings` over the bare setup."""
    return EstimateInput(**{**BARE, **settings})
