"""Reading SkyPilot catalog CSVs (`vms.csv`) into typed rows, and naming their GPUs.

SkyPilot's column order differs per cloud, so rows are read by header. A row whose required field is
malformed (a count or price that is not a number, a negative price) is an ERROR naming the file,
row and field; a well-formed row we cannot use (no GPU, an accelerator we have no datasheet for, a
fractional GPU, no on-demand price) is returned with a skip reason instead.
Column meanings: shared/catalogs/skypilot/README.md (from SkyPilot's sky/catalog/common.py).
"""

from __future__ import annotations

import ast
import csv
import json
import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from tools.catalog.bounds import MAX_CSV_BYTES, MAX_ROWS, open_bounded
from tools.errors import InvalidInputError
from tools.gpus import GPUSpec, find_gpu, list_gpus

REQUIRED_COLUMNS = ("InstanceType", "AcceleratorName", "AcceleratorCount", "Price")
# A GPU whose reported memory is further than this from its datasheet capacity is not taken to be
# that GPU (clouds report usable memory: AWS's L4 22,888 MiB is 7% under 24 GiB).
MEMORY_TOLERANCE = 0.15
# Prices SkyPilot writes when it has none: fetch_gcp.py sets TPU_V6E_MAX_PRICE = 700 for a TPU
# v6e without a price in a region, "so the failover will go to the region with precise pricing
# info first" (skypilot-org/skypilot sky/catalog/data_fetchers/fetch_gcp.py).
PLACEHOLDER_PRICES: dict[str, frozenset[float]] = {"gcp": frozenset({700.0})}


class SkyPilotRowError(InvalidInputError):
    """A SkyPilot catalog row with a malformed field; nothing from the import is used."""


@dataclass(frozen=True)
class SkyRow:
    """One well-formed SkyPilot row. Prices are USD/h; spot None = no spot offer."""

    source: str
    row: int  # 1-based data row (the header is not counted)
    instance_type: str
    accelerator: str
    count: float
    vcpus: float | None
    ram_gib: float | None
    price: float | None
    spot: float | None
    region: str
    zone: str
    gpu_mib: int | None  # per-GPU memory reported in GpuInfo, MiB


def _number(value: str | None, source: str, row: int, column: str) -> float | None:
    text = (value or "").strip()
    if not text:
        return None
    try:
        number = float(text)
    except ValueError:
        raise SkyPilotRowError(f"{source} row {row}: field {column}", text, "a number") from None
    if not math.isfinite(number) or number < 0:
        raise SkyPilotRowError(f"{source} row {row}: field {column}", text, "a finite number >= 0")
    return number


def gpu_memory_mib(gpu_info: str | None) -> int | None:
    """Per-GPU MiB from a GpuInfo cell (Python literal or JSON, `null` allowed); None if absent."""
    text = (gpu_info or "").strip()
    if not text.startswith("{"):
        return None
    parsed: object = None
    for attempt in (text, text.replace("null", "None").replace("true", "True")):
        try:
            parsed = ast.literal_eval(attempt)
            break
        except (ValueError, SyntaxError):
            continue
    if parsed is None:
        try:
            parsed = json.loads(text)
        except ValueError:
            return None
    try:
        size = parsed["Gpus"][0]["MemoryInfo"]["SizeInMiB"]  # type: ignore[index]
    except (KeyError, IndexError, TypeError):
        return None
    return int(size) if isinstance(size, int | float) and size > 0 else None


def read_rows(path: Path, source: str | None = None) -> Iterator[SkyRow]:
    """Every data row of one SkyPilot CSV, typed; raises SkyPilotRowError on a malformed field."""
    name = source or path.name
    with open_bounded(path, MAX_CSV_BYTES) as handle:
        yield from read_rows_from(handle, name)


def read_rows_from(handle: IO[str], name: str) -> Iterator[SkyRow]:
    """Every data row of one SkyPilot CSV stream, typed (at most MAX_ROWS)."""
    reader = csv.DictReader(handle)
    missing = [c for c in REQUIRED_COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        raise SkyPilotRowError(f"{name} header", missing, f"columns {', '.join(REQUIRED_COLUMNS)}")
    for number, raw in enumerate(reader, start=1):
        if number > MAX_ROWS:
            raise SkyPilotRowError(f"{name} rows", f"more than {MAX_ROWS:,}", "a smaller file")
        yield _typed_row(raw, name, number)


def _typed_row(raw: Mapping[str | None, object], name: str, number: int) -> SkyRow:
    def cell(column: str) -> str:
        value = raw.get(column)
        return value.strip() if isinstance(value, str) else ""

    count = _number(cell("AcceleratorCount"), name, number, "AcceleratorCount")
    return SkyRow(
        source=name,
        row=number,
        instance_type=cell("InstanceType"),
        accelerator=cell("AcceleratorName"),
        count=count or 0.0,
        vcpus=_number(cell("vCPUs"), name, number, "vCPUs"),
        ram_gib=_number(cell("MemoryGiB"), name, number, "MemoryGiB"),
        price=_number(cell("Price"), name, number, "Price"),
        spot=_number(cell("SpotPrice"), name, number, "SpotPrice"),
        region=cell("Region"),
        zone=cell("AvailabilityZone"),
        gpu_mib=gpu_memory_mib(cell("GpuInfo")),
    )


# Instance families whose GPU model SkyPilot's AcceleratorName does not pin down, per the clouds'
# own size documentation: Azure NC A100 v4 = A100 PCIe 80GB, NCads H100 v5 = H100 NVL 94GB,
# NCv3 = V100 PCIe 16GB (learn.microsoft.com/azure/virtual-machines/sizes); Lambda's plain
# gpu_1x_a100 is its 40 GB PCIe A100 (lambda.ai/instances).
_OVERRIDES: tuple[tuple[str, re.Pattern[str], str], ...] = (
    ("azure", re.compile(r"Standard_NC\d+ads_A100_v4"), "A100-80GB-PCIe"),
    ("azure", re.compile(r"Standard_NC\d+ad(i)?s_H100_v5"), "H100-NVL"),
    ("azure", re.compile(r"Standard_NC\d+r?s_v3"), "V100-16GB-PCIe"),
    ("lambda", re.compile(r"gpu_1x_a100"), "A100-40GB-PCIe"),
)


def _form_hint(text: str) -> str | None:
    lowered = text.lower()
    if "pcie" in lowered:
        return "PCIe"
    if re.search(r"nvl(?!ink)", lowered):
        return "NVL"
    if "sxm" in lowered:
        return "SXM"
    return None


def _family(spec: GPUSpec) -> str:
    return re.split(r"[-_]", spec.id)[0]


def _refine(spec: GPUSpec, hint_text: str, gpu_mib: int | None) -> GPUSpec:
    """The family member (SXM/PCIe/NVL, memory size) the row's names and GPU memory point to."""
    siblings = [s for s in list_gpus() if _family(s) == _family(spec) and s.vendor == spec.vendor]
    form = _form_hint(hint_text)
    if form == "NVL":
        siblings = [s for s in siblings if s.id.endswith("NVL")]
    elif form is not None:
        siblings = [s for s in siblings if s.form_factor == form and not s.id.endswith("NVL")]
    elif spec in siblings:
        siblings = [s for s in siblings if s.form_factor == spec.form_factor]
    if not siblings:
        return spec
    if gpu_mib is None:
        return spec if spec in siblings else siblings[0]
    gib = gpu_mib / 1024
    return min(siblings, key=lambda s: (abs(s.vram_gib - gib), s is not spec))


# Vast.ai writes the memory of ALL the row's GPUs into `SizeInMiB` (its 1x V100 row says 16384,
# the 2x row 32768, the 8x H200 row 1150168), where other clouds give the per-GPU figure.
_TOTAL_MEMORY_CLOUDS = frozenset({"vast"})


def per_gpu_mib(cloud: str, row: SkyRow) -> int | None:
    """The per-GPU MiB of a row, undoing the clouds that report the total of all its GPUs."""
    if row.gpu_mib is None or cloud not in _TOTAL_MEMORY_CLOUDS or row.count < 1:
        return row.gpu_mib
    return round(row.gpu_mib / row.count)


def resolve_gpu(
    cloud: str, instance_type: str, accelerator: str, gpu_mib: int | None
) -> str | None:
    """Our canonical GPU id for a SkyPilot row, or None when we have no datasheet for it."""
    for provider, pattern, gpu_id in _OVERRIDES:
        if provider == cloud and pattern.fullmatch(instance_type):
            return gpu_id
    spec = find_gpu(accelerator)
    if spec is None:
        return None
    return _refine(spec, f"{accelerator} {instance_type}", gpu_mib).id


def memory_mismatch(gpu_id: str, gpu_mib: int | None) -> str | None:
    """Why a row's reported GPU memory rules out `gpu_id` (more than MEMORY_TOLERANCE away from
    the datasheet capacity), or None: a name is never mapped to a GPU of another size."""
    if gpu_mib is None:
        return None
    spec = find_gpu(gpu_id)
    if spec is None:
        return None
    reported = gpu_mib / 1024
    if abs(reported - spec.vram_gib) <= MEMORY_TOLERANCE * spec.vram_gib:
        return None
    return f"GPU memory {reported:.0f} GiB does not match {spec.id} ({spec.vram_gib:g} GiB)"


def skip_reason_for_accelerator(accelerator: str, count: float) -> str | None:
    """Why a row with this accelerator cannot become an instance, or None if it can."""
    if not accelerator or count <= 0:
        return "no GPU"
    if accelerator.lower().startswith("tpu"):
        return "TPU (not a GPU)"
    if count != int(count):
        return "fractional GPU"
    if find_gpu(accelerator) is None:
        return f"unknown accelerator {accelerator!r}"
    return None
