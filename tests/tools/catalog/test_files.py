"""Reading and writing our own catalog files (YAML and CSV), all-or-nothing, written atomically."""

from __future__ import annotations

import os
from datetime import date
from pathlib import Path

import pytest

from tools.catalog import read_catalog_files
from tools.catalog.files import (
    CatalogFileError,
    parse_csv_text,
    parse_yaml_text,
    read_catalog_file,
    write_catalog_yaml,
)

GOOD_YAML = """
provider: aws
defaults: {source: 'test page', as_of: 2026-10-01, interconnect: pcie}
instances:
  - {instance_type: g6.xlarge, gpu: L4, gpu_count: 1, price_per_hour: 0.8048}
  - {instance_type: p5.48xlarge, gpu: h100, gpu_count: 8, interconnect: nvswitch,
     price_per_hour: 55.04, spot_price_per_hour: 17.0}
"""

GOOD_CSV = """provider,instance_type,regions,gpu,gpu_count,interconnect,price_per_hour,source,as_of
acme,a1,eu-1;eu-2,RTX 4090,1,pcie,0.35,acme page,2026-09-01
acme,a8,,H200,8,nvswitch,30.5,acme page,2026-09-01
"""


def test_yaml_rows_take_file_and_provider_defaults() -> None:
    catalog = parse_yaml_text(GOOD_YAML, "aws.yaml")
    small, big = catalog.instances
    assert (small.id, small.gpu, small.price_per_hour) == ("aws/g6.xlarge", "L4", 0.8048)
    assert (small.billing_granularity, small.min_charge_seconds) == ("second", 60), "AWS terms"
    assert (big.gpu, big.interconnect, big.spot_available) == ("H100-SXM", "nvswitch", True)
    assert big.as_of == date(2026, 10, 1)


def test_csv_rows_parse_regions_and_unknown_provider_needs_terms() -> None:
    terms = "billing_granularity,min_charge_seconds,persistent_volumes"
    text = GOOD_CSV.replace("as_of\n", f"as_of,{terms}\n")
    text = text.replace("2026-09-01\n", "2026-09-01,hour,0,false\n")
    catalog = parse_csv_text(text, "acme.csv")
    first, second = catalog.instances
    assert first.regions == ["eu-1", "eu-2"] and second.regions == []
    assert (first.gpu, second.gpu, second.gpu_count) == ("RTX4090", "H200", 8)
    assert first.billing_granularity == "hour" and first.persistent_volumes is False


def test_csv_without_billing_terms_names_row_and_field() -> None:
    with pytest.raises(CatalogFileError, match=r"acme.csv row 1: field billing_granularity: "
                       r"got '\(missing\)'; valid: Field required"):  # fmt: skip
        parse_csv_text(GOOD_CSV, "acme.csv")


@pytest.mark.parametrize(
    ("bad_row", "match"),
    [
        ("{instance_type: x, gpu: H900, gpu_count: 1, price_per_hour: 1}",
         r"row 3: field gpu: got 'H900'; valid: .*unknown GPU 'H900'"),
        ("{instance_type: x, gpu: L4, gpu_count: 0, price_per_hour: 1}",
         r"row 3: field gpu_count: got 0; valid: Input should be greater than or equal to 1"),
        ("{instance_type: x, gpu: L4, gpu_count: 1, price_per_hour: -2}",
         r"row 3: field price_per_hour: got -2; valid: .*greater than 0 \(on-demand USD per hour"),
        ("{instance_type: x, gpu: L4, gpu_count: 1, price_per_hour: 1, interconnect: cable}",
         r"row 3: field interconnect: got 'cable'; valid: Input should be 'nvswitch', 'nvlink'"),
        ("{instance_type: g6.xlarge, gpu: L4, gpu_count: 1, price_per_hour: 1}",
         r"row 3: field id: got 'aws/g6.xlarge'; valid: unique ids \(row 1\)"),
        ("[not, a, mapping]", r"row 3: got \['not', 'a', 'mapping'\]; valid: a mapping"),
    ],
)  # fmt: skip
def test_one_bad_row_fails_the_whole_file(bad_row: str, match: str) -> None:
    with pytest.raises(CatalogFileError, match=match):
        parse_yaml_text(GOOD_YAML + f"  - {bad_row}\n", "aws.yaml")


def test_csv_header_with_unknown_column_is_rejected() -> None:
    with pytest.raises(CatalogFileError, match=r"acme.csv header: got \['colour'\]; valid: "):
        parse_csv_text("provider,colour\nacme,red\n", "acme.csv")


def test_unparseable_yaml_and_wrong_suffix(tmp_path: Path) -> None:
    with pytest.raises(CatalogFileError, match="valid: valid YAML"):
        parse_yaml_text("instances: [1, 2", "broken.yaml")
    other = tmp_path / "prices.json"
    other.write_text("{}")
    with pytest.raises(CatalogFileError, match=r"a file ending in \('.yaml', '.yml', '.csv'\)"):
        read_catalog_file(other)


def test_empty_yaml_is_an_empty_catalog() -> None:
    assert len(parse_yaml_text("", "empty.yaml")) == 0


def test_write_then_read_round_trips(tmp_path: Path) -> None:
    catalog = parse_yaml_text(GOOD_YAML, "aws.yaml")
    path = write_catalog_yaml(catalog, tmp_path / "sub" / "out.yaml")
    assert read_catalog_file(path) == catalog, "normalised YAML reads back to the same rows"
    assert sorted(p.name for p in path.parent.iterdir()) == ["out.yaml"], "no temp file left"


def test_failed_write_keeps_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "out.yaml"
    path.write_text("old")

    def broken_replace(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        write_catalog_yaml(parse_yaml_text(GOOD_YAML, "aws.yaml"), path)
    assert path.read_text() == "old", "old file untouched"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.yaml"], "temp file removed"


def test_from_files_merges_in_order(tmp_path: Path) -> None:
    first = tmp_path / "a.yaml"
    first.write_text(GOOD_YAML)
    second = tmp_path / "b.yaml"
    second.write_text(GOOD_YAML.replace("0.8048", "0.7"))
    merged = read_catalog_files([first, second])
    assert merged.get("aws/g6.xlarge").price_per_hour == 0.7, "later file wins"
    assert len(merged) == 2
