"""`gpu-advisor catalog` through the real dispatcher (assistant.cli.main), output via capsys."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from assistant.cli import main

SKY_HEADER = (
    "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,SpotPrice\n"
)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_list_table_filters_and_flags_stale(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "catalog", "list", "--gpu", "B200", "--provider", "aws")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == [
        "ID", "GPUS", "VRAM/GPU", "INTERCONNECT", "$/H", "SPOT", "$/H", "BILLING", "AS_OF",
        "SOURCE", "AGE", "STALE",
    ]  # fmt: skip
    cells = lines[1].split()
    assert cells[:8] == [
        "aws/p6-b200.48xlarge", "8x", "B200", "180G", "nvswitch", "113.93", "23.84", "second",
    ]  # fmt: skip
    stale = (date.today() - date(2026, 5, 20)).days > 120
    assert (cells[-1] == "STALE") is stale, "STALE flag follows Settings.stale_price_days"
    age = (date.today() - date(2026, 5, 20)).days
    assert cells[9:11] == ["curated", f"{age}d"], "source and age per row"
    assert lines[-3:-1] == [
        "1 instance types; prices USD per hour for the whole instance",
        "Prices by provider:",
    ]
    summary = f"  aws: 1 row, curated price, {age} days old"
    assert lines[-1].startswith(summary), lines[-1]


def test_list_json_sorted_by_price(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "catalog", "list", "--gpu", "RTX4090", "--json")
    rows = json.loads(out)
    assert code == 0
    assert [r["id"] for r in rows] == [
        "tensordock/marketplace-1x-rtx4090",
        "vast/1x-RTX_4090-32-65536",
        "vast/2x-RTX_4090-32-65536",
        "vast/8x-RTX_4090-32-65536",
    ]
    assert rows[0]["price_per_hour"] == 0.35 and "stale" in rows[0] and "price_age_days" in rows[0]


def test_list_spot_sorts_by_spot_price(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(
        capsys, "catalog", "list", "--gpu", "H100", "--min-gpus", "8", "--spot", "--json"
    )
    spots = [r["spot_price_per_hour"] for r in json.loads(out)]
    assert spots[:3] == [16.9508, 18.169536, 19.71], "aws p5, azure ND H100 v5, coreweave"
    assert spots == sorted(spots)


def test_stale_days_come_from_settings(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPU_ADVISOR_STALE_PRICE_DAYS", "100000")
    _, out, _ = run(capsys, "catalog", "list", "--json")
    assert not any(r["stale"] for r in json.loads(out)), "nothing is 100000 days old"


def test_show_text_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "catalog", "show", "coreweave/hgx-h100-8x")
    assert code == 0
    assert "price_per_hour         49.24" in out and "network                infiniband" in out
    code, out, _ = run(capsys, "catalog", "show", "coreweave/hgx-h100-8x", "--json")
    data = json.loads(out)
    assert (data["gpu"], data["spot_price_per_hour"], data["as_of"]) == (
        "H100-SXM",
        19.71,
        "2026-09-20",
    )


def test_show_unknown_id_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "catalog", "show", "aws/p5.48xl")
    assert (code, out) == (2, "")
    assert err.startswith("error: unknown instance 'aws/p5.48xl'; closest known: aws/p5.48xlarge")


def test_unknown_gpu_filter_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "catalog", "list", "--gpu", "H900")
    assert code == 2 and "unknown GPU 'H900'; closest known: H200" in err


def test_import_then_list_merges(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A newer price replaces the built-in row without --replace, and says so."""
    source = tmp_path / "lambda.csv"
    source.write_text(
        SKY_HEADER
        + "gpu_1x_a10,A10,1,30,200,0.99,us-west-1,,\n"
        + "gpu_1x_rtx6000,RTX6000,1,14,46,0.5,us-west-1,,\n"
    )
    code, out, _ = run(
        capsys, "catalog", "import", str(source), "--format", "skypilot", "--as-of", "2026-11-01"
    )
    saved = tmp_path / "data" / "catalogs" / "skypilot-lambda.csv"
    assert code == 0
    assert out.splitlines() == [
        f"imported 1 instance types from {source} (2 rows read; skipped 1: "
        "1 x unknown accelerator 'RTX6000')",
        "replaced 1 older row: lambda/gpu_1x_a10: built-in $1.29/h as of 2026-09-20 -> $0.99/h"
        " as of 2026-11-01",
        f"saved to {saved}",
    ]
    _, out, _ = run(capsys, "catalog", "show", "lambda/gpu_1x_a10", "--json")
    data = json.loads(out)
    assert (data["price_per_hour"], data["as_of"]) == (0.99, "2026-11-01"), "import wins"


def test_skypilot_lambda_file_newer_than_the_builtin_imports_without_replace(
    capsys: pytest.CaptureFixture[str], shared_dir: Path, tmp_path: Path
) -> None:
    """SkyPilot's own lambda.csv, read today, is newer than every built-in lambda row: it
    imports without --replace (it used to exit 2, 'would replace 14 rows')."""
    source = tmp_path / "lambda.csv"
    source.write_bytes((shared_dir / "catalogs" / "skypilot" / "lambda.csv").read_bytes())
    code, out, err = run(capsys, "catalog", "import", str(source), "--format", "skypilot")
    assert (code, err) == (0, "")
    replaced = [line for line in out.splitlines() if line.startswith("replaced ")]
    assert len(replaced) == 1 and replaced[0].startswith("replaced 14 older rows: lambda/")
    _, out, _ = run(capsys, "catalog", "list", "--provider", "lambda", "--json")
    rows = json.loads(out)
    imported = [r for r in rows if r["origin"] == "import"]
    assert len(imported) >= 14 and all(r["as_of"] == date.today().isoformat() for r in imported)
    code, _, err = run(
        capsys, "catalog", "import", str(source), "--format", "skypilot", "--as-of", "2026-01-01"
    )
    assert code == 2 and "would replace 14 newer rows: lambda/" in err, (
        "an older file over newer rows still asks"
    )


def test_bad_import_reports_row_and_writes_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    source = tmp_path / "prices.yaml"
    source.write_text(
        "provider: aws\ndefaults: {source: t, as_of: 2026-11-01, interconnect: pcie}\n"
        "instances:\n  - {instance_type: a, gpu: L4, gpu_count: 1, price_per_hour: 1}\n"
        "  - {instance_type: b, gpu: L4, gpu_count: 1, price_per_hour: -1}\n"
    )
    code, out, err = run(capsys, "catalog", "import", str(source))
    assert (code, out) == (2, "")
    assert "prices.yaml row 2: field price_per_hour: got -1" in err
    assert not (tmp_path / "data").exists(), "data dir untouched"


def test_import_from_sky_folder_in_fake_home(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    vms = tmp_path / "home" / ".sky" / "catalogs" / "v8" / "lambda" / "vms.csv"
    vms.parent.mkdir(parents=True)
    vms.write_text(SKY_HEADER + "gpu_1x_gh200,GH200,1,64,432,1.49,us-east-3,,\n")
    code, out, _ = run(capsys, "catalog", "import", "--as-of", "2026-11-20", "--replace")
    assert code == 0 and out.startswith("imported 1 instance types from ")
    assert (tmp_path / "data" / "catalogs" / "skypilot-v8.csv").is_file()
    _, out, _ = run(capsys, "catalog", "show", "lambda/gpu_1x_gh200", "--json")
    assert json.loads(out)["price_per_hour"] == 1.49


def test_import_without_path_or_sky_folder_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "catalog", "import")
    assert code == 2 and "no ~/.sky/catalogs/<version>/ found" in err


def test_import_of_an_older_price_needs_replace(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    source = tmp_path / "prices.csv"
    source.write_text(
        "provider,instance_type,gpu,gpu_count,price_per_hour,interconnect,source,as_of\n"
        "aws,p5.48xlarge,H100,8,0.08,nvswitch,mine,2026-11-01\n"
    )
    code, out, err = run(capsys, "catalog", "import", str(source))
    assert (code, out) == (2, "")
    assert err.splitlines() == [
        f"error: import: got '{source}'; valid: prices at least as new as the rows they replace,"
        " or --replace to put older prices over newer ones; it would replace 1 newer row:"
        " aws/p5.48xlarge: built-in $55.04/h as of 2026-11-09 -> $0.08/h as of 2026-11-01"
    ]
    assert not (tmp_path / "data" / "catalogs").exists(), "nothing saved"
    code, out, _ = run(capsys, "catalog", "import", str(source), "--replace")
    assert code == 0 and "replaced (--replace) 1 newer row: aws/p5.48xlarge" in out
    _, out, _ = run(capsys, "catalog", "show", "aws/p5.48xlarge", "--json")
    data = json.loads(out)
    assert (data["price_per_hour"], data["origin"]) == (0.08, "import")


def test_refresh_prints_one_line_per_provider_and_exits_1_on_a_failure(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.fakes.catalog_server import Reply, serve

    vast = SKY_HEADER + '1x-H100_SXM-32-65536,H100,1,32,64,1.75,"Texas, US",,0.00\n'
    with serve() as server:
        server.set("/sky/v8/vast/vms.csv", Reply(vast.encode()))
        monkeypatch.setenv("GPUHUNT_CATALOG_URL", f"{server.url}/v3")
        monkeypatch.setenv("GPU_ADVISOR_SKYPILOT_CATALOG_URL", f"{server.url}/sky")
        code, out, err = run(capsys, "catalog", "refresh", "--providers", "vast", "aws")
    lines = out.splitlines()
    assert code == 1, "aws has nothing published"
    assert lines[0].startswith("vast (skypilot): updated: 1 instance types from 1 rows (version")
    assert lines[1] == (
        "aws (gpuhunt): failed: HTTP 404 Not Found; no earlier copy: the curated prices stay in use"
    )
    assert lines[2] == "1 of 2 providers current; 1 failed, their last good copies stay in use"
    assert err.splitlines() == ["[1/2] vast (skypilot) ...", "[2/2] aws (gpuhunt) ..."]
    _, out, _ = run(capsys, "catalog", "list", "--provider", "vast", "--gpu", "H100")
    assert "vast/1x-H100_SXM-32-65536" in out and " skypilot " in out and "  0h " in out
