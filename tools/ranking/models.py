"""The typed request and result of a ranking (see `tools.ranking.rank.rank`).

Money is USD; prices are per hour; time is hours; memory is bytes (GiB = 2^30 in messages).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from functools import cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from tools.catalog.freshness import ProviderFreshness
from tools.catalog.instances import Origin
from tools.enums import Interconnect, Objective, Pricing, SpotPolicy
from tools.job import DEFAULTS, JobSpec
from tools.job.defaults import MEMORY_MARGIN
from tools.job.limits import MAX_NODES
from tools.memory import EstimateInput
from tools.ranking.costs import SpotAssumptions
from tools.ranking.plans import PlanName
from tools.ranking.time.assumptions import ThroughputAssumptions
from tools.ranking.time.goodput import GoodputAssumptions
from tools.ranking.time.setup import SetupAssumptions

ExclusionKind = Literal[
    "provider",
    "region",
    "gpu",
    "vram",
    "gpu_count",
    "interconnect",
    "spot",
    "price",
    "memory",
    "throughput",
    "budget",
    "deadline",
]

DEFAULT_MEMORY_MARGIN = MEMORY_MARGIN
DEFAULT_MAX_NODES: int = DEFAULTS["max_nodes"].value


def _about(name: str) -> str | None:
    """What job field `name` means (its description in `tools.job.JobSpec`)."""
    return JobSpec.model_fields[name].description


class Workload(BaseModel):
    """How much data the run trains on: tokens, or samples x sequence length, times epochs."""

    model_config = ConfigDict(extra="forbid")

    tokens: float | None = Field(default=None, gt=0, description=_about("tokens"))
    samples: int | None = Field(default=None, gt=0, description=_about("samples"))
    seq_len: int | None = Field(
        default=None, gt=0, description="tokens per sample; default: the job's seq_len"
    )
    epochs: float = Field(default=DEFAULTS["epochs"].value, gt=0, description=_about("epochs"))

    @model_validator(mode="after")
    def _one_size(self) -> Workload:
        if (self.tokens is None) == (self.samples is None):
            raise ValueError("give exactly one of tokens or samples")
        return self

    def total_tokens(self, job_seq_len: int) -> float:
        """Tokens processed over all epochs."""
        if self.tokens is not None:
            return self.tokens * self.epochs
        assert self.samples is not None
        return self.samples * (self.seq_len or job_seq_len) * self.epochs


class Constraints(BaseModel):
    """Hard limits, in USD; an instance breaking one is listed in `excluded` with the reason."""

    model_config = ConfigDict(extra="forbid")

    max_price_per_hour: float | None = Field(
        default=None, gt=0, description="USD per hour for the whole cluster (all nodes)"
    )
    budget: float | None = Field(default=None, gt=0, description="USD for the whole run")
    deadline_hours: float | None = Field(default=None, gt=0, description=_about("deadline_hours"))
    providers: list[str] | None = Field(default=None, description=_about("providers"))
    regions: list[str] | None = Field(default=None, description=_about("regions"))
    gpus: list[str] | None = Field(default=None, description=_about("gpus"))
    max_vram_gib: float | None = Field(default=None, gt=0, description=_about("max_vram_gib"))
    spot: SpotPolicy = Field(default=DEFAULTS["spot"].value, description=_about("spot"))
    min_gpus: int | None = Field(default=None, ge=1, description=_about("min_gpus"))
    max_gpus: int | None = Field(default=None, ge=1, description=_about("max_gpus"))
    interconnect: Interconnect | None = Field(default=None, description=_about("interconnect"))
    max_nodes: int = Field(
        default=DEFAULT_MAX_NODES, ge=1, le=MAX_NODES, description=_about("max_nodes")
    )

    @model_validator(mode="after")
    def _gpu_bounds(self) -> Constraints:
        if self.min_gpus and self.max_gpus and self.min_gpus > self.max_gpus:
            raise ValueError(f"min_gpus {self.min_gpus} is above max_gpus {self.max_gpus}")
        return self


class RankingAssumptions(BaseModel):
    """Every assumption the ranking makes beyond the estimator's; all overridable."""

    model_config = ConfigDict(extra="forbid")

    memory_margin: float = Field(
        default=DEFAULT_MEMORY_MARGIN,
        ge=0,
        le=1,
        description="safety margin on the estimate: need x (1 + margin) must fit in VRAM",
    )
    throughput: ThroughputAssumptions = Field(default_factory=ThroughputAssumptions)
    spot: SpotAssumptions = Field(default_factory=SpotAssumptions)
    setup: SetupAssumptions = Field(default_factory=SetupAssumptions)
    goodput: GoodputAssumptions = Field(default_factory=GoodputAssumptions)
    allow_pcie_multi_gpu_full: bool = Field(
        default=False,
        description="rank multi-GPU full fine-tunes on PCIe-only nodes (gradient all-reduce of"
        " every weight per step crawls over PCIe; excluded by default)",
    )
    adapter_bytes_per_param: float | None = Field(
        default=None,
        gt=0,
        description="bytes per trainable LoRA parameter in a checkpoint; default: as the"
        " estimator keeps the adapters (fp32, bf16 under pure bf16 precision)",
    )


class RankRequest(BaseModel):
    """A job, the data it trains on, the limits, and what to optimise."""

    model_config = ConfigDict(extra="forbid")

    job: EstimateInput
    workload: Workload
    constraints: Constraints = Field(default_factory=Constraints)
    objective: Objective = Field(
        default=DEFAULTS["objective"].value,
        description="'cost': cheapest total; 'time': fastest; 'price': cheapest per hour",
    )
    assumptions: RankingAssumptions = Field(default_factory=RankingAssumptions)
    top: int | None = Field(default=None, ge=1, description="keep only the best N ranked rows")


class RankedOption(BaseModel):
    """One instance type that fits and meets every constraint, priced for the whole run."""

    rank: int = Field(ge=1)
    instance_id: str
    provider: str
    instance_type: str
    gpu: str = Field(description="canonical GPU id")
    gpus_per_node: int
    nodes: int
    gpu_count: int = Field(description="GPUs in all: gpus_per_node x nodes")
    vram_per_gpu_bytes: int
    need_per_gpu_bytes: int = Field(
        description="what each GPU must hold at the peak by the estimate of this plan (its"
        " figures.required: paged optimizer state the driver can move to CPU RAM left out),"
        " before margin"
    )
    margin: float = Field(description="spare memory as a share of the need: vram / need - 1")
    tight: bool = Field(
        default=False,
        description="the need fits the card but not with the memory margin: ranked after every"
        " option that keeps the margin; it may run out of memory",
    )
    plan: PlanName = Field(description="the sharding over the data-parallel ranks")
    tensor_parallel: int = Field(default=1, ge=1, description="tensor-parallel degree")
    pipeline_parallel: int = Field(default=1, ge=1, description="pipeline stages")
    plan_label: str
    pricing: Pricing
    price_per_hour: float = Field(description="USD per hour for all nodes, at this pricing")
    hours: float = Field(
        description="expected wall-clock hours at this pricing: setup, training, and the"
        " restarts after hardware failures (and spot interruptions on spot)"
    )
    total_cost: float = Field(description="expected USD for the run at this pricing, billed")
    compute_hours: float = Field(description="setup + training hours without interruptions")
    setup_hours: float = Field(
        default=0.0, description="hours before the first step (provisioning, image, downloads)"
    )
    training_hours: float = Field(default=0.0, description="training hours without interruptions")
    on_demand_total_cost: float = Field(description="USD on demand, billed")
    spot_total_cost: float | None = Field(description="expected USD on spot, billed; None if none")
    spot_hours: float | None = Field(description="expected wall hours on spot")
    checkpoint_interval_hours: float | None = Field(description="Young/Daly interval on spot")
    spot_interruptions: float | None = Field(description="expected interruptions on spot")
    spot_overhead_hours: float | None = Field(
        description="expected spot hours beyond compute: checkpoints + lost work + restarts"
    )
    checkpoint_bytes: int | None = Field(
        default=None,
        description="model state one checkpoint of this plan writes: trainable weights and"
        " optimizer state as the plan's engine keeps them (None: not computed)",
    )
    mfu: float = Field(
        description="model FLOPs utilisation of the training: the step's FLOPs without"
        " recomputation over (training hours x GPUs x the precision's dense peak)"
    )
    peak_tflops_per_gpu: float
    host_ram_need_bytes: int | None = Field(
        default=None,
        description="host RAM one node needs for the optimizer state offloaded to CPU (None: no"
        " offload)",
    )
    host_ram_bytes: int | None = Field(
        default=None, description="host RAM of one node (None: the catalog does not say)"
    )
    regions: list[str]
    source: str = Field(description="where the price was read (URL, catalog and version)")
    as_of: date = Field(description="when the price was read")
    origin: Origin = Field(default="curated", description="curated, import, gpuhunt or skypilot")
    fetched_at: datetime | None = Field(
        default=None, description="when a refresh downloaded the price (UTC); None if curated"
    )
    price_age_days: int | None = Field(
        default=None, description="days since the price was read (None: no clock given)"
    )
    price_age_hours: float | None = Field(
        default=None, description="hours since the price was read (None: no clock given)"
    )
    price_age: str | None = Field(
        default=None,
        description="e.g. 'fetched 3 h ago from gpuhunt', 'curated price, 187 days old'",
    )
    stale: bool | None = Field(
        default=None, description="older than the stale limit (None: no clock given)"
    )
    reasons: list[str] = Field(description="one line each: fit, speed, cost, provenance")


@cache
def _option_fields() -> tuple[dict[str, Any], frozenset[str]]:
    """RankedOption's fields in declared order with their defaults, and the required ones."""
    fields = RankedOption.model_fields
    assert not any(f.default_factory for f in fields.values()), "defaults only"
    required = frozenset(name for name, f in fields.items() if f.is_required())
    return {name: None if f.is_required() else f.default for name, f in fields.items()}, required


@dataclass(frozen=True, slots=True)
class OptionTemplate:
    """RankedOption fields many options share (`option_template`), for `unchecked_option`."""

    fields: dict[str, Any]  # every field in declared order: the defaults, then the shared values
    given: frozenset[str]  # the names the shared values set
    missing: frozenset[str]  # required names the shared values leave to each option


def option_template(**shared: Any) -> OptionTemplate:
    defaults, required = _option_fields()
    unknown = sorted(shared.keys() - defaults.keys())
    if unknown:
        raise TypeError(f"unknown {unknown}")
    fields = defaults.copy()
    fields.update(shared)
    return OptionTemplate(fields, frozenset(shared), required - shared.keys())


def unchecked_option(template: OptionTemplate, /, **values: Any) -> RankedOption:
    """A RankedOption from `template` and `values`, which the ranking computed from validated
    inputs with the types the fields declare, not validated again: validation is half of
    what a materialised row costs (~11 of ~20 us), and `rank` makes one per qualifying row.
    This is what pydantic's `model_construct` does, without its general (slower) loop over
    aliases. The fields keep their declared order, so the JSON is the validated model's; the
    ranking tests re-validate its rows."""
    fields = template.fields.copy()
    fields.update(values)
    if len(fields) != len(template.fields) or not template.missing <= values.keys():
        unknown = sorted(fields.keys() - template.fields.keys())
        raise TypeError(f"unknown {unknown} or missing {sorted(template.missing - values.keys())}")
    given = set(template.given)
    given.update(values)
    option = object.__new__(RankedOption)
    object.__setattr__(option, "__dict__", fields)
    object.__setattr__(option, "__pydantic_fields_set__", given)
    object.__setattr__(option, "__pydantic_extra__", None)
    object.__setattr__(option, "__pydantic_private__", None)
    return option


class Excluded(BaseModel):
    """An instance left out, and why."""

    instance_id: str = Field(description="'<provider>/<instance_type>'")
    gpu: str = Field(description="canonical GPU id")
    kind: ExclusionKind = Field(description="which rule excluded it")
    reason: str = Field(description="one line, e.g. 'needs 84.2 GiB per GPU ..., has 80.0 GiB'")


class JobSummary(BaseModel):
    """What was ranked for: the job as resolved and the figures shared by every row."""

    model: str
    method: str
    precision: str
    total_params: int
    active_params: int = Field(description="parameters used per token (MoE: active experts)")
    trainable_params: int
    tokens: float = Field(description="tokens processed over all epochs")
    images: float | None = Field(
        default=None,
        description="image models: training images (diffusion) or image-text samples (VLMs)"
        " over the run; None for language models",
    )
    training_flops: float = Field(
        description="FLOPs executed over the run: matmuls, attention and recomputation"
    )
    checkpoint_bytes: int = Field(
        description="model state one checkpoint writes, the largest over the ranking's plans"
        " (engines differ; each ranked row has its own plan's)"
    )
    objective: Objective
    spot_policy: SpotPolicy
    memory_margin: float
    assumptions: list[str]


class RankResult(BaseModel):
    """Ranked options (best first) and every excluded instance with its reason (catalog order)."""

    job: JobSummary
    ranked: list[RankedOption]
    excluded: list[Excluded]
    considered: int = Field(description="instances looked at")
    feasible: int = Field(description="instances that qualified (before `top`)")
    prices: list[ProviderFreshness] = Field(
        default_factory=list,
        description="how fresh the ranked rows' prices are, per provider (empty: no clock given)",
    )
    # the options after `ranked` when `top` cut them, built each time they are asked for; never
    # serialised, and not a field: what walks the result (grounding) sees `ranked` alone
    _rest: Callable[[], list[RankedOption]] | None = PrivateAttr(default=None)

    def keep_rest(self, rest: Callable[[], list[RankedOption]]) -> None:
        """Remember how to build the options `top` left out (`every_option`)."""
        self._rest = rest

    def every_option(self) -> list[RankedOption] | None:
        """Every option that fits, best first: `ranked` and the rest `top` left out (ranked
        on from there, at the same clock), or None when the rest was not kept."""
        if len(self.ranked) >= self.feasible:
            return list(self.ranked)
        if self._rest is None:
            return None
        return [*self.ranked, *self._rest()]
