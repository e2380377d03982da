"""A ranked option as a launch spec: a SkyPilot task YAML to copy, and the same facts as JSON.

The YAML follows SkyPilot's task format (docs.skypilot.co, reference/yaml-spec): `resources` with
`infra` (cloud, optionally /region), `instance_type`, `accelerators` ("H100:8", per node),
`use_spot` and `disk_size` (GB), and `num_nodes` when the plan spans several nodes. Providers
SkyPilot cannot launch get no `infra` line and a comment saying so. The JSON adds what the
advisor computed (hours, USD, plan, price source and date) so a launch can be traced back.

Disk size: room for the base weights, two checkpoints and the tokenized data, plus 50 GB for the
environment, rounded up to 50 GB and never under SkyPilot's 256 GB default.
"""

from __future__ import annotations

import json
import math
import re

import yaml
from pydantic import BaseModel, Field

from tools.catalog.instances import Instance
from tools.ranking.models import JobSummary, RankedOption
from tools.units import GB

# SkyPilot infra names of catalog providers it can launch (sky/clouds/*.py in
# github.com/skypilot-org/skypilot); the rest are left to the provider's own tools.
SKYPILOT_INFRA: dict[str, str] = {
    "aws": "aws",
    "gcp": "gcp",
    "azure": "azure",
    "lambda": "lambda",
    "runpod": "runpod",
    "oci": "oci",
    "nebius": "nebius",
    "vast": "vast",
    "digitalocean": "do",
    "hyperstack": "hyperstack",
}
# SkyPilot accelerator names (the AcceleratorName column of its vms.csv catalogs) of our GPU ids;
# an id missing here is used as it is.
SKYPILOT_ACCELERATORS: dict[str, str] = {
    "H100-SXM": "H100",
    "H100-PCIe": "H100",
    "H200": "H200",
    "GH200": "GH200",
    "B200": "B200",
    "A100-40GB-SXM": "A100",
    "A100-80GB-SXM": "A100-80GB",
    "A100-40GB-PCIe": "A100",
    "A100-80GB-PCIe": "A100-80GB",
    "V100-16GB-SXM": "V100",
    "V100-32GB-SXM": "V100-32GB",
    "V100-16GB-PCIe": "V100",
    "RTXA6000": "RTXA6000",
    "RTXA5000": "RTXA5000",
    "RTXA4000": "RTXA4000",
}
SKYPILOT_DEFAULT_DISK_GB = 256  # sky.resources.DEFAULT_DISK_SIZE_GB
ENVIRONMENT_GB = 50  # OS image, CUDA, Python environment, logs
DISK_STEP_GB = 50
BYTES_PER_TOKEN = 4  # tokenized data stored as int32 ids
BYTES_PER_BASE_PARAM = 2  # base weights downloaded in 16-bit


class LaunchSpec(BaseModel):
    """Everything needed to launch the chosen option, and what the advisor expects it to cost."""

    name: str = Field(description="task name derived from the model and method")
    provider: str
    instance_type: str
    infra: str | None = Field(description="SkyPilot infra (cloud[/region]); None = unsupported")
    accelerators: str = Field(description="SkyPilot accelerators per node, e.g. 'H100:8'")
    num_nodes: int = Field(ge=1)
    use_spot: bool
    disk_size_gb: int = Field(gt=0, description="boot disk per node, GB (1e9 bytes)")
    region: str | None
    gpu: str = Field(description="canonical GPU id")
    gpu_count: int = Field(description="GPUs in all")
    plan: str = Field(description="parallel plan, e.g. 'ZeRO-3/FSDP'")
    price_per_hour_usd: float = Field(description="USD per hour for all nodes at this pricing")
    expected_hours: float
    expected_total_usd: float
    model: str
    method: str
    price_source: str
    price_as_of: str = Field(description="ISO date the price was read")


def disk_size_gb(job: JobSummary) -> int:
    """Boot disk per node in GB for `job` (see the module docstring for the rule)."""
    need = (
        job.total_params * BYTES_PER_BASE_PARAM
        + 2 * job.checkpoint_bytes
        + job.tokens * BYTES_PER_TOKEN
    ) / GB + ENVIRONMENT_GB
    rounded = math.ceil(need / DISK_STEP_GB) * DISK_STEP_GB
    return max(SKYPILOT_DEFAULT_DISK_GB, int(rounded))


def _task_name(job: JobSummary) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", f"{job.model}-{job.method}".lower()).strip("-")
    return slug[:60].strip("-") or "training"


def build_launch_spec(
    option: RankedOption, job: JobSummary, instance: Instance | None = None
) -> LaunchSpec:
    """The launch spec of one ranked option; `instance` (its catalog row) adds the region."""
    regions = instance.regions if instance is not None else option.regions
    region = regions[0] if len(regions) == 1 else None
    infra = SKYPILOT_INFRA.get(option.provider)
    if infra is not None and region is not None:
        infra = f"{infra}/{region}"
    return LaunchSpec(
        name=_task_name(job),
        provider=option.provider,
        instance_type=option.instance_type,
        infra=infra,
        accelerators=f"{SKYPILOT_ACCELERATORS.get(option.gpu, option.gpu)}:{option.gpus_per_node}",
        num_nodes=option.nodes,
        use_spot=option.pricing == "spot",
        disk_size_gb=disk_size_gb(job),
        region=region,
        gpu=option.gpu,
        gpu_count=option.gpu_count,
        plan=option.plan_label,
        price_per_hour_usd=round(option.price_per_hour, 2),
        expected_hours=round(option.hours, 2),
        expected_total_usd=round(option.total_cost, 2),
        model=job.model,
        method=job.method,
        price_source=option.source,
        price_as_of=option.as_of.isoformat(),
    )


def to_skypilot_yaml(spec: LaunchSpec) -> str:
    """The SkyPilot task YAML for `spec`, with a header comment of the expected cost."""
    resources: dict[str, object] = {}
    if spec.infra is not None:
        resources["infra"] = spec.infra
    resources.update(
        instance_type=spec.instance_type,
        accelerators=spec.accelerators,
        use_spot=spec.use_spot,
        disk_size=spec.disk_size_gb,
    )
    task: dict[str, object] = {"name": spec.name}
    if spec.num_nodes > 1:
        task["num_nodes"] = spec.num_nodes
    task["resources"] = resources
    header = [
        f"# {spec.model}, {spec.method}, {spec.plan} on {spec.gpu_count} x {spec.gpu}",
        f"# expected: {spec.expected_hours:g} h, ${spec.expected_total_usd:,.2f} "
        f"at ${spec.price_per_hour_usd:,.2f}/h ({'spot' if spec.use_spot else 'on demand'})",
        f"# price: {spec.price_source}, as of {spec.price_as_of}",
    ]
    if spec.infra is None:
        header.append(
            f"# SkyPilot cannot launch {spec.provider}: create the instance with its own tools"
        )
    body = yaml.safe_dump(task, sort_keys=False, default_flow_style=False)
    return "\n".join(header) + "\n" + body


def to_json(spec: LaunchSpec) -> str:
    """The launch spec as indented JSON."""
    return json.dumps(spec.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"
