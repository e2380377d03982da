"""How a conversation or a form amends a job: `JobUpdate` (the fields one message or edit sets,
and the ones it resets) and `apply_update` (the job after it; setting one of a pair of fields
that describe the same thing, such as tokens and samples, clears the other)."""

from __future__ import annotations

from typing import Final

from pydantic import ConfigDict, Field

from tools.job.spec import JOB_FIELDS, FieldName, JobSpec

__all__ = ["EXCLUSIVE", "JobUpdate", "apply_update"]

# Fields that describe the same thing: setting one clears the others (data is tokens or samples).
EXCLUSIVE: Final[dict[str, tuple[str, ...]]] = {
    "tokens": ("samples", "images"),
    "samples": ("tokens", "images"),
    "images": ("tokens", "samples"),
    "steps": ("epochs",),
    "epochs": ("steps",),
}


class JobUpdate(JobSpec):
    """What one message or form edit says about the job: the fields it sets, and the fields it
    resets to open."""

    # its schema is built on first use: the estimate and ranking paths never amend a job
    model_config = ConfigDict(defer_build=True)

    clear: list[FieldName] = Field(
        default_factory=list, description="fields the message resets to open"
    )

    def given(self) -> dict[str, object]:
        """The fields this update sets, by name."""
        return {name: getattr(self, name) for name in JOB_FIELDS if getattr(self, name) is not None}

    def is_empty(self) -> bool:
        """True when the update sets and resets nothing."""
        return not self.clear and not self.given()


def apply_update(spec: JobSpec, update: JobUpdate) -> JobSpec:
    """The job after one update: reset what `update.clear` names, then every field the update
    sets replaces the old value (lists too: 'on RunPod or Lambda' replaces the providers)."""
    values = dict(spec)
    for cleared in update.clear:
        values[cleared] = None
    given = update.given()
    for name, value in given.items():
        values[name] = value
        for other in EXCLUSIVE.get(name, ()):
            if other not in given:
                values[other] = None
    return JobSpec.model_validate(values)
