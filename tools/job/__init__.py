"""The job a user describes, defined once: its fields, their defaults and money.

`JobSpec` holds every field of a training job, its data, limits and objective, each optional;
`JobUpdate` and `apply_update` amend it (a conversation does so turn by turn); `DEFAULTS` says
what an open field becomes and why (`default_for`); `Money` is an amount in a named currency.
Resolving a spec into the estimator's and the ranking's inputs is `tools.advice.resolve_job`.
"""

from tools.job.defaults import DEFAULT_METHOD, DEFAULTS, Default, default_for
from tools.job.money import Money, parse_money
from tools.job.spec import (
    FIELD_GROUPS,
    JOB_FIELDS,
    FieldGroup,
    FieldName,
    JobSpec,
)
from tools.job.update import JobUpdate, apply_update

__all__ = [
    "DEFAULTS",
    "DEFAULT_METHOD",
    "FIELD_GROUPS",
    "JOB_FIELDS",
    "Default",
    "FieldGroup",
    "FieldName",
    "JobSpec",
    "JobUpdate",
    "Money",
    "apply_update",
    "default_for",
    "parse_money",
]
