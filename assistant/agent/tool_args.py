"""Argument schemas of the assistant's tools: what a chat model may pass, with units everywhere.

These are the JSON schemas a tool-calling model sees. The job tools' arguments are the fields of
`tools.job.JobSpec`, generated from it (same names, vocabularies, bounds and descriptions), so a
field added to the job appears here too; the model is a name or a count (never a local file),
money a number in USD or a text with its currency. Omitted fields take the job's stated defaults
(`tools.job.defaults`), which the tool results list.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, create_model
from pydantic.fields import FieldInfo

from tools.enums import Method
from tools.job import DEFAULTS, FIELD_GROUPS, JobSpec

__all__ = [
    "ESTIMATE_FIELDS",
    "MAX_QUERY_CHARS",
    "MAX_ROWS",
    "RANK_FIELDS",
    "CheckFitArgs",
    "EstimateMemoryArgs",
    "JobArgs",
    "ListInstancesArgs",
    "LookupGpuArgs",
    "LookupModelArgs",
    "RankInstancesArgs",
    "SearchKnowledgeArgs",
]

MAX_QUERY_CHARS = 500
MAX_ROWS = 20
ESTIMATE_FIELDS: tuple[str, ...] = FIELD_GROUPS["training"] + FIELD_GROUPS["plan"]
RANK_FIELDS: tuple[str, ...] = (
    FIELD_GROUPS["training"] + ("num_gpus",) + FIELD_GROUPS["data"] + FIELD_GROUPS["limits"]
)
_MONEY_FIELDS = ("max_price_per_hour", "budget")


class JobArgs(BaseModel):
    """One training job: the model, and any field of the job (omitted: the stated default)."""

    model_config = ConfigDict(extra="forbid")

    model: str = Field(
        min_length=1,
        max_length=200,
        description="model to train: a registry name such as 'meta-llama/Llama-3.1-8B' or "
        "'llama 3.1 8b', or a parameter count such as '70B' or '7e9' (parameters)",
    )


class RankArgsBase(JobArgs):
    """The job, its data, its limits and how many ranked rows to list."""

    top: int = Field(
        5, ge=1, le=MAX_ROWS, description="ranked rows listed in the reply (count, best first)"
    )


def _described(name: str, info: FieldInfo) -> str:
    default = DEFAULTS.get(name)
    text = info.description or name
    if default is not None and default.value is not None:
        by_method = "".join(f", {method}: {value}" for method, value in default.by_method.items())
        text += f"; omitted: {default.value}{by_method}"
    return text


def _job_fields(names: tuple[str, ...]) -> dict[str, Any]:
    """create_model field definitions copied from JobSpec (money as a number or a text)."""
    fields: dict[str, Any] = {}
    for name in names:
        info = JobSpec.model_fields[name]
        copy = FieldInfo.merge_field_infos(info, default=None, description=_described(name, info))
        annotation: Any = info.annotation
        if name in _MONEY_FIELDS:
            annotation = float | str | None
            copy = FieldInfo.merge_field_infos(
                copy,
                description=f"{copy.description}: USD as a number, or an amount with its"
                " currency such as '150 EUR'",
            )
        fields[name] = (annotation, copy)
    return fields


EstimateMemoryArgs = create_model(
    "EstimateMemoryArgs",
    __base__=JobArgs,
    __doc__="Arguments of estimate_memory: the job and the parallel plan of one estimate.",
    **_job_fields(ESTIMATE_FIELDS),
)
CheckFitArgs = create_model(
    "CheckFitArgs",
    __base__=JobArgs,
    __doc__="Arguments of check_fit: the job, and the memory of each GPU one has (num_gpus of"
    " them).",
    gpu_memory_gib=(
        float,
        Field(gt=0, le=4096, description="memory of each GPU to check against, GiB, e.g. 24"),
    ),
    **_job_fields(ESTIMATE_FIELDS),
)
RankInstancesArgs = create_model(
    "RankInstancesArgs",
    __base__=RankArgsBase,
    __doc__="Arguments of rank_instances: the job, the data it trains on, limits, objective.",
    **_job_fields(RANK_FIELDS),
)


class SearchKnowledgeArgs(BaseModel):
    """Arguments of search_knowledge."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(
        min_length=1,
        max_length=MAX_QUERY_CHARS,
        description="the question in the user's words and language (text, at most 500 chars)",
    )
    lang: str | None = Field(
        None,
        pattern=r"^[a-z]{2}$",
        description="ISO 639-1 code of the answer language, e.g. 'nl'; omitted: detected",
    )
    k: int = Field(3, ge=1, le=8, description="passages to return (count), one per topic")
    job_method: Method | None = Field(
        None,
        description="method of the conversation's job (pretrain, full, lora, qlora): picks the "
        "training or the fine-tuning version of a question both answer; omitted: no job",
    )


class LookupModelArgs(BaseModel):
    """Arguments of lookup_model."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(
        min_length=1,
        max_length=200,
        description="a registry name such as 'llama 3 70b' or a parameter count such as '7B' "
        "(parameters)",
    )


class LookupGpuArgs(BaseModel):
    """Arguments of lookup_gpu."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(
        min_length=1,
        max_length=100,
        description="GPU name, id or alias, e.g. 'H100', 'A100 80GB', 'RTX 4090' (text)",
    )


class ListInstancesArgs(BaseModel):
    """Arguments of list_instances: catalog filters, all optional."""

    model_config = ConfigDict(extra="forbid")

    gpu: list[str] | None = Field(
        None, description="GPU names or aliases, any of them, e.g. ['H100', 'L40S'] (names)"
    )
    min_vram_gib: float | None = Field(None, gt=0, description="least memory per GPU, GiB")
    providers: list[str] | None = Field(
        None, description="provider keys, any of them, e.g. ['aws', 'runpod'] (lower case)"
    )
    regions: list[str] | None = Field(
        None, description="region names, any of them, e.g. ['us-east-1'] (provider spelling)"
    )
    max_price_per_hour: float | None = Field(
        None, gt=0, description="most USD per hour for the whole instance (spot price if spot_only)"
    )
    spot_only: bool = Field(False, description="only instances sold as spot (true/false)")
    min_gpus: int | None = Field(None, ge=1, description="least GPUs per instance (count)")
    max_gpus: int | None = Field(None, ge=1, description="most GPUs per instance (count)")
    limit: int = Field(
        10, ge=1, le=MAX_ROWS, description="rows listed in the reply (count, cheapest first)"
    )
