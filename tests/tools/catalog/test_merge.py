"""Merge rules between curated, refreshed and imported rows, and price ages in words."""

from __future__ import annotations

from datetime import UTC, date, datetime

from tests.fakes.catalogs import instance
from tools.catalog.freshness import (
    price_age,
    provider_summaries,
    short_age,
    summaries_of_aged,
)
from tools.catalog.instances import Catalog, Instance
from tools.catalog.merge import describe_overrides, import_conflicts, overlay_fresh

NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)
FETCHED = datetime(2026, 11, 30, 9, tzinfo=UTC)


def curated(
    name: str, gpu: str, count: int, price: float, regions: list[str], provider: str = "aws"
) -> Instance:
    return instance(name, gpu, count, price, provider=provider, id=f"{provider}/{name}",
                    regions=regions, as_of=date(2026, 5, 20))  # fmt: skip


def fresh(
    name: str, gpu: str, count: int, price: float, regions: list[str], provider: str = "aws"
) -> Instance:
    return instance(name, gpu, count, price, provider=provider, id=f"{provider}/{name}",
                    regions=regions, as_of=FETCHED.date(), origin="gpuhunt",
                    fetched_at=FETCHED)  # fmt: skip


def test_same_type_and_region_fresh_wins_other_regions_stay() -> None:
    base = Catalog([
        curated("p5.48xlarge", "H100-SXM", 8, 98.32, ["us-east-1", "ap-south-1"]),
        curated("g6.xlarge", "L4", 1, 0.80, ["us-east-1"]),
        curated("p4d.24xlarge", "A100-40GB-SXM", 8, 32.77, ["us-east-1"]),
        curated("gpu_1x_a10", "A10", 1, 1.29, ["us-west-1"], provider="lambda"),
    ])  # fmt: skip
    new = Catalog([
        fresh("p5.48xlarge", "H100-SXM", 8, 55.04, ["us-east-1", "us-west-2"]),
        fresh("g6.xlarge", "L4", 1, 0.8048, ["us-east-1"]),
    ])  # fmt: skip
    merged, counts = overlay_fresh(base, new)
    by_id = {item.id: item for item in merged}
    assert set(by_id) == {
        "aws/p5.48xlarge", "aws/p5.48xlarge@ap-south-1", "aws/g6.xlarge", "aws/p4d.24xlarge",
        "lambda/gpu_1x_a10",
    }  # fmt: skip
    assert by_id["aws/p5.48xlarge"].price_per_hour == 55.04, "fresh row took the id"
    kept = by_id["aws/p5.48xlarge@ap-south-1"]
    assert (kept.price_per_hour, kept.regions, kept.origin) == (98.32, ["ap-south-1"], "curated")
    assert by_id["aws/p4d.24xlarge"].origin == "curated", "a shape the fresh copy does not sell"
    assert by_id["lambda/gpu_1x_a10"] == base.get("lambda/gpu_1x_a10"), "uncovered provider"
    assert (counts.replaced, counts.narrowed, counts.superseded) == (1, 1, 0)


def test_curated_rows_under_other_names_are_superseded_by_the_same_gpus() -> None:
    base = Catalog([
        curated("community-h100-pcie-1x", "H100-PCIe", 1, 1.99, [], provider="runpod"),
        curated("community-a40-1x", "A40", 1, 0.40, [], provider="runpod"),
    ])  # fmt: skip
    new = Catalog([fresh("NVIDIA H100 PCIe", "H100-PCIe", 1, 2.39, ["EU-RO-1"], provider="runpod")])
    merged, counts = overlay_fresh(base, new)
    assert [item.id for item in merged] == ["runpod/community-a40-1x", "runpod/NVIDIA H100 PCIe"]
    assert counts.superseded == 1


def test_a_newer_curated_row_is_not_replaced_by_an_older_download() -> None:
    newer = curated("g6.xlarge", "L4", 1, 0.70, ["us-east-1"]).model_copy(
        update={"as_of": date(2026, 12, 1)}
    )
    merged, _ = overlay_fresh(Catalog([newer]), Catalog([fresh("g6.xlarge", "L4", 1, 0.80, [])]))
    assert [(i.id, i.price_per_hour) for i in merged] == [("aws/g6.xlarge", 0.8)], (
        "the fresh row keeps its id; the newer curated row has no region left to keep"
    )


def test_import_conflicts_list_every_replaced_row_and_which_are_older() -> None:
    current = Catalog([
        curated("p5.48xlarge", "H100-SXM", 8, 55.04, ["us-east-1"]),
        fresh("g6.xlarge", "L4", 1, 0.8048, ["us-east-1"]),
    ])  # fmt: skip
    mine = Catalog([
        curated("p5.48xlarge", "H100-SXM", 8, 0.08, []).model_copy(update={"origin": "import"}),
        curated("g6.xlarge", "L4", 1, 0.5, []).model_copy(update={"origin": "import"}),
        curated("new.type", "L4", 1, 0.5, []).model_copy(update={"origin": "import"}),
    ])  # fmt: skip
    found = import_conflicts(mine, current)
    assert [o.instance_id for o in found] == ["aws/p5.48xlarge", "aws/g6.xlarge"]
    assert [o.needs_consent for o in found] == [False, True], (
        "same date as the built-in row: no consent; older than the fresh row: consent"
    )
    assert describe_overrides(found, kind="replaced") == (
        "2 replaced rows: aws/p5.48xlarge: built-in $55.04/h as of 2026-05-20 -> $0.08/h as of"
        " 2026-05-20; aws/g6.xlarge: gpuhunt $0.8048/h as of 2026-11-30 -> $0.5/h as of"
        " 2026-05-20"
    )


def test_price_ages_in_words_and_per_provider() -> None:
    old = curated("p4d.24xlarge", "A100-40GB-SXM", 8, 32.77, ["us-east-1"])
    new = fresh("g6.xlarge", "L4", 1, 0.8048, ["us-east-1"])
    aged = price_age(old, NOW, 120)
    assert (aged.text, aged.age_days, aged.stale, short_age(aged)) == (
        "curated price, 194 days old", 194, True, "194d",
    )  # fmt: skip
    recent = price_age(new, NOW, 120)
    assert (recent.text, recent.age_hours, recent.stale, short_age(recent)) == (
        "fetched 3 h ago from gpuhunt", 3.0, False, "3h",
    )  # fmt: skip
    (summary,) = provider_summaries([old, new], NOW, 120)
    assert summary.text == (
        "aws: 2 rows, fetched 3 h ago from gpuhunt; oldest 194 days; mixed: 1 curated,"
        " 1 gpuhunt; 1 stale (older than 120 days)"
    )
    assert (summary.origins, summary.stale_rows) == ({"curated": 1, "gpuhunt": 1}, 1)
    assert summaries_of_aged([(old, aged), (new, recent)], 120) == [summary], "ages known"


def test_catalog_row_is_the_comparison_table_row() -> None:
    from tools.catalog.freshness import catalog_row

    item = fresh("p5.48xlarge", "H100-SXM", 8, 55.04, ["us-east-1"]).model_copy(
        update={"spot_price_per_hour": 9.37, "spot_available": True}
    )
    row = catalog_row(item, NOW, 120)
    assert (row["price_per_gpu_hour"], row["spot_price_per_gpu_hour"]) == (6.88, 1.17125)
    assert (row["price_age"], row["price_age_hours"], row["stale"]) == (
        "fetched 3 h ago from gpuhunt", 3.0, False,
    )  # fmt: skip
    assert (row["origin"], row["fetched_at"], row["as_of"]) == (
        "gpuhunt", "2026-11-30T09:00:00Z", "2026-11-30",
    )  # fmt: skip
