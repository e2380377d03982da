"""Reading a tab's price file: the layouts `catalog import` reads, its checks, and the words."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

import assistant.web.catalog_upload as upload
from assistant.web.catalog_upload import (
    CatalogUploadError,
    catalog_upload_problem,
    read_catalog_upload,
    upload_summary,
)
from tests.fakes.catalogs import web_catalog

TODAY = date(2026, 12, 7)
SKY = (
    "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,SpotPrice\n"
    "gpu_1x_a10,A10,1,30,200,1.29,us-west-1,,\n"
    "cpu_4x,,,4,16,0.2,us-west-1,,\n"
)


def _file(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_skypilot_layout_is_read_dated_today_with_rows_without_a_gpu_counted(
    tmp_path: Path,
) -> None:
    read = read_catalog_upload(_file(tmp_path, "lambda.csv", SKY), web_catalog(), TODAY)
    (row,) = read.catalog
    assert (row.id, row.price_per_hour, row.as_of, row.origin) == (
        "lambda/gpu_1x_a10",
        1.29,
        TODAY,
        "import",
    )
    assert (read.rows_read, read.skipped, read.replaced) == (2, 1, ())
    assert upload_summary(read, "nl") == (
        "Je prijzen uit lambda.csv: 1 instancetypes uit 2 gelezen rijen (1 overgeslagen zonder"
        " bruikbare GPU); vervangen catalogusrijen met hetzelfde id: 0. De chat, het paneel en"
        " deze tabel gebruiken ze in dit tabblad."
    )


def test_a_file_name_in_the_summary_is_text(tmp_path: Path) -> None:
    read = read_catalog_upload(_file(tmp_path, "**my** [q].csv", SKY), web_catalog(), TODAY)
    assert upload_summary(read, "en").startswith(r"Your prices from \*\*my\*\* \[q\].csv: ")


def test_size_and_count_limits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    big = _file(tmp_path, "big.csv", "x" * (upload.MAX_CATALOG_UPLOAD_BYTES + 1))
    with pytest.raises(CatalogUploadError) as too_big:
        read_catalog_upload(big, web_catalog(), TODAY)
    assert catalog_upload_problem(too_big.value, "fr").startswith(
        "big.csv n'a pas été utilisé : il fait 5\u202f000\u202f001 octets. "
    )
    monkeypatch.setattr(upload, "MAX_OWN_INSTANCES", 0)
    with pytest.raises(CatalogUploadError) as too_many:
        read_catalog_upload(_file(tmp_path, "lambda.csv", SKY), web_catalog(), TODAY)
    assert (too_many.value.kind, too_many.value.details) == ("too_many", {"count": 1})
    assert "it has 1 instance types" in catalog_upload_problem(too_many.value, "en")
