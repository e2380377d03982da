"""GPU specifications: one typed, sourced record per GPU model, looked up by forgiving names.

The table lives in `tools/data/gpus.yaml`. Every figure there is a vendor datasheet fact whose
source is listed on the record; tensor throughput is always the DENSE peak (never the "with
sparsity" figure). Units: memory capacity in GiB (DRAM capacity is binary: the vendor's "80 GB" of
HBM is 80 x 2^30 bytes), bandwidth in GB/s (1e9 bytes per second), throughput in TFLOPS (1e12/s).
"""

from __future__ import annotations

import difflib
import re
from functools import cache
from importlib import resources
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field

from tools.errors import UnknownNameError

FormFactor = Literal["SXM", "PCIe", "OAM", "superchip", "consumer"]
Vendor = Literal["NVIDIA", "AMD", "Intel"]

_DATA_FILE = "data/gpus.yaml"  # inside the `tools` package


class GPUSpec(BaseModel):
    """Datasheet figures of one GPU. TFLOPS are dense tensor-core peaks; None = not published."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(description="canonical id, e.g. 'H100-SXM', 'A100-80GB-SXM', 'RTX4090'")
    name: str = Field(description="marketing name, e.g. 'NVIDIA H100 SXM5 80GB'")
    vendor: Vendor
    architecture: str = Field(description="GPU architecture, e.g. 'Hopper', 'Ampere', 'CDNA 3'")
    aliases: list[str] = Field(
        default_factory=list,
        description="other names it goes by, including SkyPilot AcceleratorName values",
    )
    vram_gib: float = Field(gt=0, description="memory capacity in GiB (2^30 bytes)")
    memory_type: str = Field(description="e.g. 'HBM3', 'GDDR6'")
    memory_bandwidth_gbs: float = Field(gt=0, description="peak memory bandwidth, GB/s (1e9 B/s)")
    bf16_tflops: float | None = Field(default=None, gt=0, description="dense BF16 tensor TFLOPS")
    fp16_tflops: float | None = Field(default=None, gt=0, description="dense FP16 tensor TFLOPS")
    tf32_tflops: float | None = Field(default=None, gt=0, description="dense TF32 tensor TFLOPS")
    fp8_tflops: float | None = Field(default=None, gt=0, description="dense FP8 tensor TFLOPS")
    fp8: bool = Field(description="tensor cores accept FP8 inputs")
    bf16: bool = Field(description="tensor cores accept BF16 inputs")
    form_factor: FormFactor
    nvlink_gbs: float | None = Field(
        default=None,
        gt=0,
        description="GPU-to-GPU link bandwidth, GB/s, bidirectional total as the vendor states it;"
        " None when the part has no such link",
    )
    tdp_watts: float | None = Field(default=None, gt=0, description="max board/module power, W")
    notes: str = Field(default="", description="caveats about the figures (what is missing, why)")
    sources: list[str] = Field(min_length=1, description="vendor datasheet titles and URLs")

    @property
    def best_tflops(self) -> float | None:
        """The dense 16-bit tensor peak used for training: BF16 when supported, else FP16."""
        return self.bf16_tflops if self.bf16_tflops is not None else self.fp16_tflops


def normalize_name(name: str) -> str:
    """Lower-case and drop everything but letters and digits: 'H100 80GB-HBM3' -> 'h10080gbhbm3'."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


@cache
def _load_table() -> tuple[GPUSpec, ...]:
    text = resources.files("tools").joinpath(_DATA_FILE).read_text(encoding="utf-8")
    raw = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    return tuple(GPUSpec.model_validate(item) for item in raw["gpus"])


@cache
def _index() -> dict[str, GPUSpec]:
    """Normalized id/name/alias -> spec. Raises if two GPUs claim the same name."""
    index: dict[str, GPUSpec] = {}
    for spec in _load_table():
        for name in (spec.id, spec.name, *spec.aliases):
            key = normalize_name(name)
            owner = index.get(key)
            if owner is not None and owner.id != spec.id:
                raise ValueError(f"GPU name {name!r} is claimed by both {owner.id} and {spec.id}")
            index[key] = spec
    return index


def list_gpus() -> list[GPUSpec]:
    """Every known GPU, in table order."""
    return list(_load_table())


def gpu_ids() -> list[str]:
    """Canonical ids of every known GPU."""
    return [spec.id for spec in _load_table()]


def find_gpu(name: str) -> GPUSpec | None:
    """The GPU called `name` (id, name or alias; case, spaces and punctuation ignored), or None."""
    return _index().get(normalize_name(name))


def lookup_gpu(name: str) -> GPUSpec:
    """The GPU called `name`; raises UnknownNameError listing the closest known ids."""
    spec = find_gpu(name)
    if spec is not None:
        return spec
    raise UnknownNameError("GPU", name, closest_gpu_ids(name))


def matching_gpu_ids(name: str) -> frozenset[str]:
    """Canonical ids that a catalog filter on `name` matches.

    A family name ('H100', 'A100', 'V100') matches every variant of the family; a family with a
    memory size and nothing else ('A100-80GB', 'V100 16GB') matches the family's variants of that
    size, whatever their form factor; any other id, name or alias ('H100 PCIe', 'A100 40GB SXM')
    matches only the GPU it names. Unknown names raise UnknownNameError like `lookup_gpu`.
    """
    key = normalize_name(name)
    family = _families().get(key)
    if family is not None:
        return family
    return _sized_variants(key) or frozenset({lookup_gpu(name).id})


@cache
def _families() -> dict[str, frozenset[str]]:
    """Normalized family name -> ids of its variants, for families of two or more GPUs
    ('h100' -> H100-SXM, H100-PCIe, H100-NVL). A family is the part of the ids before the '-'."""
    table: dict[str, set[str]] = {}
    for gpu_id in gpu_ids():
        if "-" in gpu_id:
            table.setdefault(normalize_name(gpu_id.split("-")[0]), set()).add(gpu_id)
    return {key: frozenset(ids) for key, ids in table.items() if len(ids) > 1}


def _sized_variants(key: str) -> frozenset[str]:
    """For a normalized 'family + size' key ('a10080gb', 'h10080g'): the family's variants with
    that many GiB; empty when the key has another form or no variant has that size."""
    for family, ids in _families().items():
        size = re.fullmatch(re.escape(family) + r"(\d+)gb?", key)
        if size is not None:
            gib = int(size.group(1))
            return frozenset(gid for gid in ids if lookup_gpu(gid).vram_gib == gib)
    return frozenset()


def closest_gpu_ids(name: str, limit: int = 5) -> list[str]:
    """Up to `limit` canonical ids whose names look most like `name`."""
    index = _index()
    keys = difflib.get_close_matches(normalize_name(name), list(index), n=limit * 3, cutoff=0.4)
    ids: list[str] = []
    for key in keys:
        gpu_id = index[key].id
        if gpu_id not in ids:
            ids.append(gpu_id)
    if not ids:
        ids = [gid for gid in gpu_ids() if normalize_name(name)[:2] in normalize_name(gid)]
    return ids[:limit]
