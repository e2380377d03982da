"""Saved imports under <data_dir>/catalogs/: validate first, write atomically, merge on load."""

from __future__ import annotations

import os
from datetime import date
from pathlib import Path

import pytest

from tools.catalog import builtin_catalog
from tools.catalog.files import CatalogFileError
from tools.catalog.skypilot_rows import SkyPilotRowError
from tools.catalog.store import (
    detect_format,
    import_catalog,
    import_name,
    load_catalog,
    save_import,
    saved_imports,
)

TODAY = date(2026, 11, 30)
SKY_HEADER = (
    "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,SpotPrice\n"
)
OURS = """provider: lambda
defaults: {source: 'test', as_of: 2026-11-01, interconnect: nvswitch}
instances:
  - {instance_type: gpu_8x_h100_sxm5, gpu: H100, gpu_count: 8, price_per_hour: 20.0}
"""


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_detect_format(tmp_path: Path) -> None:
    sky = tmp_path / "vms.csv"
    sky.write_text(SKY_HEADER)
    ours = tmp_path / "mine.csv"
    ours.write_text("provider,instance_type\n")
    yml = tmp_path / "mine.yml"
    yml.write_text(OURS)
    got = [detect_format(p) for p in (tmp_path, sky, ours, yml)]
    assert got == ["skypilot", "skypilot", "csv", "yaml"]


def test_import_names(tmp_path: Path) -> None:
    assert import_name(Path("x/v8/aws/vms.csv"), "skypilot") == "skypilot-aws"
    assert import_name(Path("My Prices.yaml"), "yaml") == "yaml-my-prices"


def test_saved_import_replaces_builtin_rows(tmp_path: Path) -> None:
    source = tmp_path / "mine.yaml"
    source.write_text(OURS)
    data_dir = tmp_path / "data"
    result = import_catalog(source, None, TODAY)
    saved = save_import(result.catalog, data_dir, import_name(source, "yaml"))
    assert saved == data_dir / "catalogs" / "yaml-mine.csv"
    assert saved_imports(data_dir) == [saved]
    merged = load_catalog(data_dir)
    assert merged.get("lambda/gpu_8x_h100_sxm5").price_per_hour == 20.0, "import wins over built-in"
    assert len(merged) == len(builtin_catalog()), "same id replaced, not added"


def test_skypilot_as_of_defaults_to_file_date_capped_at_today(tmp_path: Path) -> None:
    csv = tmp_path / "lambda.csv"
    csv.write_text(SKY_HEADER + "gpu_1x_a10,A10,1,30,200,1.29,us-west-1,,\n")
    stamp = 1_780_000_000  # 2026-05-28 UTC
    os.utime(csv, (stamp, stamp))
    from_file = import_catalog(csv, "skypilot", TODAY).catalog.get("lambda/gpu_1x_a10")
    assert from_file.as_of == date.fromtimestamp(stamp)
    capped = import_catalog(csv, "skypilot", date(2026, 1, 1)).catalog.get("lambda/gpu_1x_a10")
    assert capped.as_of == date(2026, 1, 1)
    given = import_catalog(csv, "skypilot", TODAY, as_of=date(2026, 4, 2)).catalog
    assert given.get("lambda/gpu_1x_a10").as_of == date(2026, 4, 2)


def test_failed_import_leaves_data_dir_unchanged(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    good = tmp_path / "mine.yaml"
    good.write_text(OURS)
    save_import(import_catalog(good, None, TODAY).catalog, data_dir, "yaml-mine")
    before = snapshot(data_dir)
    bad = tmp_path / "mine2.yaml"
    bad.write_text(OURS + "  - {instance_type: x, gpu: L4, gpu_count: 1, price_per_hour: abc}\n")
    with pytest.raises(
        CatalogFileError, match=r"mine2.yaml row 2: field price_per_hour: got 'abc'"
    ):
        import_catalog(bad, None, TODAY)
    sky = tmp_path / "aws.csv"
    sky.write_text(SKY_HEADER + "g1,L4,1,4,16,0.8,r,,\ng2,L4,one,4,16,0.8,r,,\n")
    with pytest.raises(SkyPilotRowError, match=r"aws.csv row 2: field AcceleratorCount: got 'one'"):
        import_catalog(sky, None, TODAY)
    assert snapshot(data_dir) == before, "nothing written or removed"


def test_import_rejects_missing_path_and_empty_result(tmp_path: Path) -> None:
    with pytest.raises(CatalogFileError, match=r"path: got .*valid: an existing file or folder"):
        import_catalog(tmp_path / "nope.csv", None, TODAY)
    cpu_only = tmp_path / "aws.csv"
    cpu_only.write_text(SKY_HEADER + "c5.large,,,2,4,0.085,us-east-1,,\n")
    result = import_catalog(cpu_only, None, TODAY)
    assert (len(result.catalog), dict(result.skipped)) == (0, {"no GPU": 1})
    with pytest.raises(CatalogFileError, match="at least one usable GPU instance"):
        save_import(result.catalog, tmp_path / "data", "skypilot-aws")
    assert not (tmp_path / "data").exists()


def test_load_without_data_dir_is_builtin() -> None:
    assert load_catalog(None) == builtin_catalog()
