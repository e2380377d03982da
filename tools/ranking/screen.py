"""Hard constraints checked before any estimate: who sells it, where, which GPU, how many, links.

Checks split by what they depend on, so the shape-level ones run once per machine shape:
- per instance: provider, region (an area such as 'eu' or a region name; see
  `tools.catalog.regions`), GPU model and memory per GPU, spot offer and price cap;
- per shape: GPU count bounds (node counts), required interconnect, the PCIe full-fine-tune rule.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from tools.catalog.instances import Instance
from tools.catalog.regions import region_matches
from tools.errors import UnknownNameError
from tools.gpus import matching_gpu_ids
from tools.ranking.images import ImageRankRequest
from tools.ranking.models import Constraints, RankRequest
from tools.ranking.prepare import Reject
from tools.ranking.text import usd


def node_range(gpus_per_node: int, multi_node: bool, cons: Constraints) -> range:
    """Node counts allowed for an instance type by min/max GPUs and multi-node support."""
    low = max(1, math.ceil((cons.min_gpus or 1) / gpus_per_node))
    high = cons.max_nodes if multi_node else 1
    if cons.max_gpus is not None:
        high = min(high, cons.max_gpus // gpus_per_node)
    return range(low, high + 1)


@dataclass(frozen=True, slots=True)
class Screen:
    """The request's instance-level constraints, prepared once per ranking."""

    providers: frozenset[str] | None
    regions: tuple[str, ...] | None
    region_text: str
    gpus: frozenset[str] | None
    gpu_text: str
    max_vram_gib: float | None
    spot_required: bool
    spot_allowed: bool
    max_price: float | None
    active: bool  # False when none of these is set (the common case: the checks are skipped)

    @classmethod
    def build(cls, cons: Constraints, items: list[Instance]) -> Screen:
        providers = _provider_set(cons, items)
        gpus = frozenset().union(*(matching_gpu_ids(g) for g in cons.gpus)) if cons.gpus else None
        return cls(
            providers=providers,
            regions=tuple(r.strip() for r in cons.regions) if cons.regions else None,
            region_text=", ".join(cons.regions or []),
            gpus=gpus,
            gpu_text=", ".join(cons.gpus or []),
            max_vram_gib=cons.max_vram_gib,
            spot_required=cons.spot == "required",
            spot_allowed=cons.spot != "never",
            max_price=cons.max_price_per_hour,
            active=bool(
                providers is not None
                or cons.regions is not None
                or gpus is not None
                or cons.max_vram_gib is not None
                or cons.spot == "required"
                or cons.max_price_per_hour is not None
            ),
        )

    def where(self, inst: Instance) -> Reject | None:
        """Provider, region, GPU model and memory per GPU."""
        if self.providers is not None and inst.provider not in self.providers:
            return Reject("provider", f"provider {inst.provider} not requested")
        if self.regions is not None and not any(
            _in_region(hint, region) for hint in self.regions for region in inst.regions
        ):
            return Reject("region", f"not offered in {self.region_text}")
        if self.gpus is not None and inst.gpu not in self.gpus:
            return Reject("gpu", f"{inst.gpu} is not among the GPUs asked for ({self.gpu_text})")
        if self.max_vram_gib is not None and inst.vram_per_gpu_gib > self.max_vram_gib:
            return Reject(
                "vram",
                f"{inst.vram_per_gpu_gib:g} GiB per GPU is over the {self.max_vram_gib:g} GiB"
                " asked for",
            )
        return None

    def offer(self, inst: Instance) -> Reject | None:
        """Spot offer and price cap (one node; the cluster price is checked after the plan)."""
        spot = inst.spot_price_per_hour if inst.spot_available else None
        if self.spot_required and spot is None:
            return Reject("spot", "no spot offer")
        if self.max_price is None:
            return None
        prices = [] if self.spot_required else [inst.price_per_hour]
        if spot is not None and self.spot_allowed:
            prices.append(spot)
        cheapest = min(prices)
        if cheapest > self.max_price:
            return Reject("price", over_price(cheapest, self.max_price))
        return None


def shape_problem(
    inst: Instance, nodes: range, request: RankRequest | ImageRankRequest
) -> Reject | None:
    """GPU count and interconnect rules (depend only on the machine shape)."""
    cons = request.constraints
    if not nodes:
        return Reject("gpu_count", _gpu_count_reason(inst, cons))
    required = cons.interconnect
    if required is not None:
        accepted = ("nvlink", "nvswitch") if required == "nvlink" else (required,)
        if inst.interconnect not in accepted:
            return Reject(
                "interconnect", f"interconnect is {inst.interconnect}; {required} required"
            )
    if (
        request.job.method in ("full", "pretrain")
        and inst.gpu_count > 1
        and inst.interconnect == "pcie"
        and not request.assumptions.allow_pcie_multi_gpu_full
    ):
        return Reject("interconnect", "multi-GPU full fine-tune needs NVLink; this node is PCIe")
    return None


@lru_cache(maxsize=4096)
def _in_region(hint: str, region: str) -> bool:
    """`region_matches`, remembered: a catalog repeats a few region names over many rows."""
    return region_matches(hint, region)


def over_price(price: float, cap: float) -> str:
    return f"over max price: {usd(price)}/h > {usd(cap)}/h"


def _provider_set(cons: Constraints, items: list[Instance]) -> frozenset[str] | None:
    """The requested providers, lower-cased; a name the catalog lacks is an error."""
    if cons.providers is None:
        return None
    known = {inst.provider for inst in items}
    wanted = frozenset(p.strip().lower() for p in cons.providers)
    for name in sorted(wanted - known):
        close = sorted(k for k in known if k[:2] == name[:2]) or sorted(known)[:5]
        raise UnknownNameError("provider", name, close)
    return wanted


def _gpu_count_reason(inst: Instance, cons: Constraints) -> str:
    count = f"{inst.gpu_count} GPU{'s' if inst.gpu_count > 1 else ''}"
    if cons.max_gpus is not None and inst.gpu_count > cons.max_gpus:
        return f"has {count} per node, more than the maximum of {cons.max_gpus}"
    if not inst.multi_node:
        return (
            f"has {count} and is not sold as multi-node clusters; at least {cons.min_gpus} wanted"
        )
    return f"no cluster of up to {cons.max_nodes} nodes x {count} gives {cons.min_gpus} or more"
