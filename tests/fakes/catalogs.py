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


def shop_catalog() -> Catalog:
    """Eleven instances of four providers for filter tests: every GPU family with variants
    (H100 SXM/PCIe/NVL, A100 40/80 GB, V100 16/32 GB), spot and on-demand, several regions."""
    rows = [
        ("lambda", "h100-pcie-1x", "H100-PCIe", 1, 2.49, None, ["us-west-1"]),
        ("lambda", "h100-sxm-8x", "H100-SXM", 8, 23.92, None, ["us-east-1"]),
        ("runpod", "h100-nvl-1x", "H100-NVL", 1, 2.59, 1.4, ["EU-RO-1"]),
        ("runpod", "a100-80-sxm-1x", "A100-80GB-SXM", 1, 1.64, None, ["EU-RO-1"]),
        ("runpod", "a100-40-pcie-1x", "A100-40GB-PCIe", 1, 1.19, None, ["US-TX-3"]),
        ("aws", "p5.48xlarge", "H100-SXM", 8, 55.04, 16.95, ["us-east-1", "us-west-2"]),
        ("aws", "p6-b200.48xlarge", "B200", 8, 113.93, 23.84, ["us-east-1"]),
        ("aws", "p3.2xlarge", "V100-16GB-SXM", 1, 3.06, 0.92, ["us-east-1"]),
        ("gcp", "a3-highgpu-8g", "H100-SXM", 8, 43.07, None, ["us-central1"]),
        ("gcp", "v100-32-1x", "V100-32GB-SXM", 1, 2.55, None, ["europe-west4"]),
        ("azure", "nc40-h100", "H100-NVL", 1, 6.98, 2.19, ["eastus"]),
    ]
    return Catalog(
        instance(
            name, gpu, count, price, provider=provider, regions=regions,
            spot_price_per_hour=spot, spot_available=spot is not None,
        )
        for provider, name, gpu, count, price, spot, regions in rows
    )  # fmt: skip


def image_catalog() -> Catalog:
    """Seven instances for image-model rankings: 24 GB cards (L4, RTX 4090), a 48 GB L40S, an
    80 GB A100 alone and two over PCIe, an 8 x H100 SXM node and a 2 x L4 PCIe node."""
    return Catalog([
        instance("l4-1x", "L4", 1, 0.80),
        instance("l4-2x", "L4", 2, 1.60, interconnect="pcie"),
        instance("rtx4090-1x", "RTX4090", 1, 0.40),
        instance("l40s-1x", "L40S", 1, 1.00),
        instance("a100-80-1x", "A100-80GB-SXM", 1, 1.60),
        instance("a100-80-2x-pcie", "A100-80GB-PCIe", 2, 3.00, interconnect="pcie"),
        instance("h100-8x", "H100-SXM", 8, 24.00),
    ])  # fmt: skip
