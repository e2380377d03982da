"""SkyPilot importer, on the real catalog rows in ../shared/catalogs/skypilot and on small fakes."""

from __future__ import annotations

from datetime import date
from functools import cache
from pathlib import Path

import pytest

from tools.catalog.skypilot import (
    ImportResult,
    cloud_of,
    import_skypilot,
    infer_interconnect,
    sky_catalog_dir,
    summarize_skips,
)
from tools.catalog.skypilot_rows import (
    SkyPilotRowError,
    gpu_memory_mib,
    memory_mismatch,
    resolve_gpu,
)

AS_OF = date(2026, 5, 20)


@cache
def _import(path: Path) -> ImportResult:
    return import_skypilot(path, as_of=AS_OF)


@pytest.fixture
def everything(shared_dir: Path) -> ImportResult:
    return _import(shared_dir / "catalogs" / "skypilot")


# Instances per cloud from the whole folder, and skipped rows per file, counted by hand from the
# CSVs: e.g. lambda = 22 instance types x 17 regions at one price each, minus the Turing-era
# Quadro RTX 6000 (no datasheet entry) -> 21; nebius = 18 distinct types, all known GPUs.
# vast: 2x-A100_SXM4 splits into a 40 GB and an 80 GB tier once memory is read per GPU.
# B300 (aws p6-b300, lium, verda) and RTX PRO 6000 (jarvislabs, lium, seeweb, verda, vast's
# RTXPRO6000WS) have datasheet entries: 21 instance types that were skipped before.
EXPECTED_PER_CLOUD = {
    "aws": 57, "azure": 316, "fluidstack": 1, "gcp": 184, "hyperbolic": 3, "hyperstack": 24,
    "ibm": 6, "jarvislabs": 16, "lambda": 21, "lium": 38, "mithril": 4, "nebius": 18,
    "seeweb": 25, "vast": 41, "verda": 14, "yotta": 8,
}  # fmt: skip


def test_instances_per_cloud(everything: ImportResult) -> None:
    counts: dict[str, int] = {}
    for item in everything.catalog:
        counts[item.provider] = counts.get(item.provider, 0) + 1
    assert counts == EXPECTED_PER_CLOUD
    assert len(everything.catalog) == 776
    assert everything.rows_read == 3083, "all rows of all 18 CSVs, GCP host rows included"


def test_skipped_rows_are_counted_by_reason(everything: ImportResult) -> None:
    skipped = everything.skipped
    assert skipped["GPU attaches to an n1 host VM (not in the catalog)"] == 201, "GCP T4/V100"
    assert skipped["fractional GPU"] == 108, "Azure A10 slices (0.167/0.333/0.5 GPU)"
    assert skipped["no host VM price for the zone"] == 39
    assert skipped["no on-demand price"] == 14, "AWS p5e (spot only) + 5 Verda rows"
    assert skipped["unknown accelerator 'B300'"] == 0, "B300 is in the GPU table"
    assert skipped["unknown accelerator 'RTX6000'"] == 18, "Turing Quadro RTX 6000: not mapped"
    assert not [reason for reason in skipped if reason.startswith("GPU memory")], "no mismatch"
    assert everything.skipped_total == 624


@pytest.mark.parametrize(
    ("file", "instances", "skipped"),
    [
        ("aws.csv", 57, {"no on-demand price": 9}),
        ("lambda.csv", 21, {"unknown accelerator 'RTX6000'": 17}),
        ("nebius.csv", 18, {}),
        ("hyperstack.csv", 24, {}),
        ("gcp.csv", 0, {"no host VM price for the zone": 465, "unknown accelerator 'P100'": 36,
                        "unknown accelerator 'P4'": 51,
                        "GPU attaches to an n1 host VM (not in the catalog)": 201}),
    ],
)  # fmt: skip
def test_single_files(shared_dir: Path, file: str, instances: int, skipped: dict[str, int]) -> None:
    result = _import(shared_dir / "catalogs" / "skypilot" / file)
    assert len(result.catalog) == instances, file
    assert dict(result.skipped) == skipped, f"{file}: without its host rows GCP has no prices"


@pytest.mark.parametrize(
    ("instance_id", "gpu", "count", "price", "spot", "n_regions", "interconnect"),
    [
        # p5.48xlarge at 55.04 in us-east-1/us-east-2/us-west-2; lowest AZ spot there 9.3722
        ("aws/p5.48xlarge", "H100-SXM", 8, 55.04, 9.3722, 3, "nvswitch"),
        ("aws/p5.48xlarge@eu-north-1", "H100-SXM", 8, 58.8928, 10.5722, 1, "nvswitch"),
        ("aws/p3dn.24xlarge", "V100-32GB-SXM", 8, 31.212, 4.5474, 2, "nvlink"),
        # GCP europe-west4: A100 x1 1.61365 + a2-highgpu-1g host 0.81406; spot 1.3251 + 0.36774
        ("gcp/a2-highgpu-1g", "A100-40GB-SXM", 1, 2.42771, 1.69284, 1, "pcie"),
        ("gcp/a4-highgpu-8g", "B200", 8, 64.44, 32.6064, 5, "nvswitch"),
        ("lambda/gpu_8x_h100_sxm5", "H100-SXM", 8, 31.92, None, 17, "nvswitch"),
        ("lambda/gpu_1x_a100", "A100-40GB-PCIe", 1, 1.99, None, 17, "pcie"),
        ("azure/Standard_NC40ads_H100_v5", "H100-NVL", 1, 6.98, 2.192418, 4, "pcie"),
        ("hyperstack/n3-H100x8-NVLink", "H100-PCIe", 8, 15.6, None, 1, "nvlink"),
        ("vast/1x-A100_SXM4-32-65536", "A100-40GB-SXM", 1, 0.93, None, 1, "pcie"),
        ("vast/1x-A100_SXM4-32-65536@Czechia, CZ, EU", "A100-80GB-SXM", 1, 0.93, None, 1, "pcie"),
        ("vast/1x-H100_NVL-32-65536", "H100-NVL", 1, 1.98, None, 1, "pcie"),
        ("fluidstack/H100_NVLINK_80GB::8", "H100-SXM", 8, 23.92, None, 1, "nvswitch"),
    ],
)  # fmt: skip
def test_exact_rows(
    everything: ImportResult,
    instance_id: str,
    gpu: str,
    count: int,
    price: float,
    spot: float | None,
    n_regions: int,
    interconnect: str,
) -> None:
    item = everything.catalog.get(instance_id)
    got = (item.gpu, item.gpu_count, item.price_per_hour, item.spot_price_per_hour)
    assert got == (gpu, count, price, spot), instance_id
    assert (len(item.regions), item.interconnect) == (n_regions, interconnect), instance_id
    assert item.as_of == AS_OF and "SkyPilot catalog" in item.source


def test_fabrics_and_billing_terms_are_filled(everything: ImportResult) -> None:
    p5 = everything.catalog.get("aws/p5.48xlarge")
    assert (p5.network, p5.network_gbps, p5.multi_node) == ("ethernet", 3200, True)
    nd = everything.catalog.get("azure/Standard_ND96isr_H100_v5")
    assert (nd.network, nd.network_gbps) == ("infiniband", 3200)
    assert (p5.billing_granularity, p5.min_charge_seconds) == ("second", 60)
    lium = next(i for i in everything.catalog if i.provider == "lium")
    assert lium.billing_granularity == "hour" and "no billing terms recorded" in lium.notes


# ------------------------------------------------------------------------------ small fakes
AWS_HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,AvailabilityZone\n"  # noqa: E501


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_malformed_price_fails_with_row_and_field(tmp_path: Path) -> None:
    csv = write(tmp_path / "aws.csv", AWS_HEADER + "g1,L4,1,4,16,,0.8,,us-east-1,use1-az1\n"
                "g2,L4,1,4,16,,cheap,,us-east-1,use1-az1\n")  # fmt: skip
    with pytest.raises(
        SkyPilotRowError, match=r"aws.csv row 2: field Price: got 'cheap'; valid: a number"
    ):
        import_skypilot(csv, as_of=AS_OF)


def test_negative_count_and_missing_column_fail(tmp_path: Path) -> None:
    csv = write(tmp_path / "aws.csv", AWS_HEADER + "g1,L4,-1,4,16,,0.8,,us-east-1,use1-az1\n")
    with pytest.raises(SkyPilotRowError, match=r"row 1: field AcceleratorCount: got '-1'"):
        import_skypilot(csv, as_of=AS_OF)
    bad = write(tmp_path / "x" / "aws.csv", "InstanceType,Price\ng1,1\n")
    with pytest.raises(
        SkyPilotRowError, match=r"aws.csv header: got \['AcceleratorName', 'AcceleratorCount'\]"
    ):
        import_skypilot(bad, as_of=AS_OF)


def test_cpu_rows_and_zero_spot(tmp_path: Path) -> None:
    csv = write(tmp_path / "vast.csv", AWS_HEADER + "c1,,,4,16,,0.1,,r,\n"
                "1x-4090,RTX4090,1,8,32,,0.40,0.00,\"Oregon, US, NA\",\n")  # fmt: skip
    result = import_skypilot(csv, as_of=AS_OF)
    assert dict(result.skipped) == {"no GPU": 1}
    item = result.catalog.get("vast/1x-4090")
    assert (item.spot_price_per_hour, item.spot_available) == (None, False), "0.00 means none"
    assert item.regions == ["Oregon, US, NA"]


def test_sky_layout_under_a_fake_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write(home / ".sky/catalogs/v7/aws/vms.csv", AWS_HEADER + "old,L4,1,4,16,,9.9,,us-east-1,a\n")
    write(
        home / ".sky/catalogs/v8/aws/vms.csv",
        AWS_HEADER + "g6.xlarge,L4,1,4,16,,0.8048,0.3,us-east-1,a\n",
    )
    write(
        home / ".sky/catalogs/v8/lambda/vms.csv",
        AWS_HEADER + "gpu_1x_a10,A10,1,30,200,,1.29,,us-west-1,\n",
    )
    found = sky_catalog_dir(home)
    assert found == home / ".sky" / "catalogs" / "v8", "newest version folder"
    result = import_skypilot(found, as_of=AS_OF)
    assert sorted(i.id for i in result.catalog) == ["aws/g6.xlarge", "lambda/gpu_1x_a10"]
    assert result.catalog.get("lambda/gpu_1x_a10").billing_granularity == "minute"


def test_no_sky_folder(tmp_path: Path) -> None:
    assert sky_catalog_dir(tmp_path) is None


@pytest.mark.parametrize(
    ("name", "cloud"),
    [("aws.csv", "aws"), ("gcp_gpu_host_vms.csv", "gcp"), ("azure_anycloud-sh.csv", "azure"),
     ("v8/lambda/vms.csv", "lambda")],
)  # fmt: skip
def test_cloud_of(name: str, cloud: str) -> None:
    assert cloud_of(Path(name)) == cloud


@pytest.mark.parametrize(
    ("cell", "mib"),
    [
        ("{'Gpus': [{'Name': 'A100', 'MemoryInfo': {'SizeInMiB': 81920}}]}", 81920),
        (
            "{'Gpus': [{'Name': 'x', 'Manufacturer': null, 'MemoryInfo': {'SizeInMiB': 24576}}]}",
            24576,
        ),
        ('{"Gpus": [{"Name": "x", "MemoryInfo": {"SizeInMiB": 49152}}]}', 49152),
        ("{'Gpus': [{'MemoryInfo': {'SizeInMiB': 0}}]}", None),
        ("V100", None),
        ("{broken", None),
    ],
)
def test_gpu_memory_from_gpu_info(cell: str, mib: int | None) -> None:
    assert gpu_memory_mib(cell) == mib


@pytest.mark.parametrize(
    ("cloud", "instance_type", "accelerator", "mib", "gpu"),
    [
        ("vast", "1x-A100_SXM4", "A100", 81920, "A100-80GB-SXM"),
        ("vast", "2x-A100_PCIE", "A100", 40960, "A100-40GB-PCIe"),
        ("vast", "1x-H100_NVL", "H100", 95830, "H100-NVL"),
        ("fluidstack", "H100_NVLINK_80GB::8", "H100-NVLINK", 81920, "H100-SXM"),
        ("azure", "Standard_NC24ads_A100_v4", "A100-80GB", None, "A100-80GB-PCIe"),
        ("azure", "Standard_NC6s_v3", "V100", None, "V100-16GB-PCIe"),
        ("aws", "p3dn.24xlarge", "V100-32GB", 32768, "V100-32GB-SXM"),
        ("seeweb", "x", "RTX PRO 6000 96GB", None, "RTXPRO6000"),
        ("lambda", "gpu_1x_rtx6000", "RTX6000", 24576, None),  # Turing Quadro, not the Ada card
        ("aws", "p6-b300.48xlarge", "B300", 275040, "B300"),
    ],
)
def test_resolve_gpu(cloud: str, instance_type: str, accelerator: str, mib: int | None,
                     gpu: str | None) -> None:  # fmt: skip
    assert resolve_gpu(cloud, instance_type, accelerator, mib) == gpu


@pytest.mark.parametrize(
    ("gpu", "mib", "reason"),
    [
        ("B300", 275040, None),  # AWS reports 268.6 GiB usable of 288
        ("L4", 22888, None),  # AWS gr6: 22.4 GiB of 24
        ("RTX6000-Ada", 24576, "GPU memory 24 GiB does not match RTX6000-Ada (48 GiB)"),
        ("A100-80GB-SXM", 40960, "GPU memory 40 GiB does not match A100-80GB-SXM (80 GiB)"),
        ("H100-SXM", None, None),
    ],
)
def test_memory_mismatch_refuses_a_gpu_of_another_size(
    gpu: str, mib: int | None, reason: str | None
) -> None:
    assert memory_mismatch(gpu, mib) == reason


def test_tpu_rows_and_placeholder_prices_are_skipped_by_reason(tmp_path: Path) -> None:
    gcp = tmp_path / "gcp" / "vms.csv"
    gcp.parent.mkdir()
    gcp.write_text(
        "InstanceType,vCPUs,MemoryGiB,AcceleratorName,AcceleratorCount,GpuInfo,Region,"
        "AvailabilityZone,Price,SpotPrice\n"
        ",,,tpu-v6e-8,1,tpu-v6e-8,asia-east1,asia-east1-b,700.0,700.0\n"
        ",,,A100,1,,us-central1,us-central1-a,700.0,1.0\n"
        ",,,A100,1,,us-central1,us-central1-b,1.5,0.5\n"
        "a2-highgpu-1g,12,85,,,,us-central1,us-central1-b,0.9,0.3\n"
    )
    result = import_skypilot(gcp, as_of=AS_OF)
    assert dict(result.skipped) == {"TPU (not a GPU)": 1, "placeholder price 700.0": 1}
    (item,) = result.catalog
    assert (item.id, item.price_per_hour, item.spot_price_per_hour) == (
        "gcp/a2-highgpu-1g",
        2.4,
        0.8,
    )


@pytest.mark.parametrize(
    ("gpu", "count", "names", "expected"),
    [
        ("H100-SXM", 1, "p5.4xlarge", "pcie"),
        ("H100-SXM", 8, "p5.48xlarge", "nvswitch"),
        ("V100-16GB-SXM", 8, "p3.16xlarge", "nvlink"),
        ("MI300X", 8, "x", "nvlink"),
        ("H100-PCIe", 8, "n3-H100x8-NVLink", "nvlink"),
        ("RTX4090", 8, "8x-RTX_4090", "pcie"),
    ],
)
def test_infer_interconnect(gpu: str, count: int, names: str, expected: str) -> None:
    assert infer_interconnect(gpu, count, names) == expected


def test_summarize_skips() -> None:
    assert summarize_skips([("a", 1), ("b", 3)]) == "3 x b; 1 x a"
    assert summarize_skips([]) == "none"


@pytest.mark.parametrize(
    ("instance_id", "gpu", "vram_gib"),
    [
        # Vast's GpuInfo SizeInMiB is the total of the row's GPUs: 1x V100 16384, 2x 32768, 4x 65536
        ("vast/1x-Tesla_V100-32-65536", "V100-16GB-SXM", 16),
        ("vast/2x-Tesla_V100-32-65536", "V100-16GB-SXM", 16),
        ("vast/4x-Tesla_V100-32-65536", "V100-16GB-SXM", 16),
        # 8x H200 row: 1150168 MiB in all = 143771 MiB per GPU
        ("vast/8x-H200-32-65536", "H200", 141),
    ],
)
def test_vast_memory_is_per_row_not_per_gpu(
    everything: ImportResult, instance_id: str, gpu: str, vram_gib: float
) -> None:
    item = everything.catalog.get(instance_id)
    assert (item.gpu, item.vram_per_gpu_gib) == (gpu, vram_gib), instance_id
