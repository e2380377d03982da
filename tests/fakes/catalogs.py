"""Synthetic instances: every figure chosen so the arithmetic of a test is exact."""

from __future__ import annotations

from datetime import date
from typing import Any

from tools.catalog.instances import Catalog, Instance

AS_OF = date(2026, 1, 15)


def instance(instance_type: str, gpu: str, gpu_count: int, price: float, **extra: Any) -> Instance:
    """An instance of provider 'testcloud', per-second billing, no minimum, unless overridden."""
    fields: dict[str, Any] = {
        "provider": "testcloud",
        "instance_type": instance_type,
        "regions": ["us-east"],
        "gpu": gpu,
        "gpu_count": gpu_count,
        "interconnect": "nvswitch" if gpu_count > 1 else "pcie",
        "price_per_hour": price,
        "spot_available": extra.get("spot_price_per_hour") is not None,
        "billing_granularity": "second",
        "min_charge_seconds": 0,
        "persistent_volumes": True,
        "source": "test catalog",
        "as_of": AS_OF,
    }
    fields.update(extra)
    return Instance(**fields)


def make_instance(**over: Any) -> Instance:
    """An AWS L40S instance with a spot price, unless overridden."""
    fields: dict[str, Any] = {
        "provider": "aws",
        "instance_type": "g6e.xlarge",
        "gpu": "L40S",
        "gpu_count": 1,
        "interconnect": "pcie",
        "price_per_hour": 1.861,
        "spot_price_per_hour": 0.9,
        "regions": ["us-east-1"],
        "billing_granularity": "second",
        "min_charge_seconds": 60,
        "persistent_volumes": True,
        "source": "aws pricing page",
        "as_of": date(2025, 6, 1),
    }
    fields.update(over)
    return Instance(**fields)


def web_catalog() -> Catalog:
    """Three instances the web tests rank: an L40S with spot, an A10G, an H100 with no region."""
    return Catalog([
        make_instance(),
        make_instance(instance_type="g5.xlarge", gpu="A10G", price_per_hour=1.006,
                      spot_price_per_hour=None, spot_available=False),
        make_instance(provider="runpod", instance_type="h100", gpu="H100-SXM",
                      price_per_hour=2.99, spot_price_per_hour=None, spot_available=False,
                      regions=[]),
    ])  # fmt: skip
