"""Tables and chart data of the web app, from hand-built artifacts with known figures."""

from __future__ import annotations

from datetime import date

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assistant.web.charts import memory_chart, vram_lines
from assistant.web.views import (
    CatalogFilters,
    breakdown_table,
    catalog_table,
    excluded_table,
    filter_catalog_table,
    passages_markdown,
    ranked_table,
)
from knowledge.retrieval import Passage
from tests.fakes.artifacts import make_estimate, make_excluded, make_option, make_ranking
from tests.fakes.catalogs import make_instance
from tools.catalog.instances import Catalog
from tools.errors import UnknownNameError
from tools.units import GIB


def test_ranked_table_copies_the_option_figures_rounded_for_display() -> None:
    option = make_option(spot_total_cost=4.321, margin=0.20891)
    inst = make_instance()
    table = ranked_table([option], {inst.id: inst}, "en")
    assert table.headers == [
        "#", "Provider", "Instance", "GPUs", "VRAM/GPU (GiB)", "Interconnect", "$/h",
        "Est. hours", "Total $", "Spot total $", "Fit margin (%)", "Why",
    ], "English headers with units"  # fmt: skip
    assert table.rows == [
        [1, "aws", "g6e.xlarge", "1 × L40S", 48.0, "pcie", 1.86, 5.2, 9.75, 4.32, 20.9,
         "a single GPU · on demand"],
    ], "figures copied from the option, rounded"  # fmt: skip
    assert table.datatypes[0] == "number" and table.datatypes[6] == "number", "numbers sort"


def test_ranked_table_speaks_the_conversation_language_and_shows_nodes() -> None:
    option = make_option(gpus_per_node=8, nodes=2, gpu_count=16, gpu="H100-SXM", plan="zero3",
                         pricing="spot")  # fmt: skip
    table = ranked_table([option], {}, "de")
    assert table.headers[3] == "GPUs" and table.headers[-1] == "Warum", "German headers"
    assert table.rows[0][3] == "2 × 8 × H100-SXM", "nodes x GPUs per node x GPU"
    assert table.rows[0][5] == "", "interconnect unknown without the catalog row"
    assert "ZeRO-3" in str(table.rows[0][-1]) and "Spot" in str(table.rows[0][-1]).title()


def test_excluded_table_translates_the_rule_and_keeps_the_reason() -> None:
    excluded = make_excluded("memory", 2, gpu="T4")
    inst = make_instance(provider="gcp", instance_type="memory-0", gpu="T4", gpu_count=4)
    table = excluded_table(excluded, {inst.id: inst}, "fr")
    assert table.headers == ["Fournisseur", "Instance", "GPU", "Règle", "Raison"]
    assert table.rows == [
        ["gcp", "memory-0", "4 × T4", "mémoire", "English memory"],
        ["gcp", "memory-1", "T4", "mémoire", "English memory"],
    ], "count from the catalog row when known, the tool's reason verbatim"


def test_catalog_table_is_cheapest_first_and_flags_stale_prices() -> None:
    fresh = make_instance(as_of=date(2025, 6, 1))
    stale = make_instance(instance_type="g6e.2xlarge", price_per_hour=1.5, as_of=date(2024, 1, 1),
                          spot_price_per_hour=None, spot_available=False, regions=[])  # fmt: skip
    table = catalog_table([fresh, stale], date(2025, 7, 1), 120, "en")
    assert [row[1] for row in table.rows] == ["g6e.2xlarge", "g6e.xlarge"], "cheapest first"
    assert table.rows[0] == [
        "aws", "g6e.2xlarge", "1 × L40S", 48.0, "pcie", 1.5, None, "", "aws pricing page",
        "2024-01-01", "⚠ stale",
    ]  # fmt: skip
    assert table.rows[1][-1] == "", "30 days old is fresh under a 120-day limit"
    assert table.rows[1][6] == 0.9 and table.rows[1][7] == "us-east-1"


def test_filter_catalog_table_counts_matches_and_applies_every_filter() -> None:
    catalog = Catalog([
        make_instance(),
        make_instance(provider="runpod", instance_type="h100", gpu="H100-SXM",
                      price_per_hour=2.99, spot_price_per_hour=None, spot_available=False,
                      regions=["eu-ro-1"]),
    ])  # fmt: skip
    text, table = filter_catalog_table(
        catalog, CatalogFilters(min_vram_gib=60), date(2025, 7, 1), 120, "tr"
    )
    assert text == "**1** / 2 satır" and table.rows[0][1] == "h100", "only the 80 GiB GPU"
    text, table = filter_catalog_table(
        catalog, CatalogFilters(spot_only=True, max_price=1.0), date(2025, 7, 1), 120, "en"
    )
    assert [row[1] for row in table.rows] == ["g6e.xlarge"], "spot price 0.9 is under 1.0"
    _, none = filter_catalog_table(
        catalog, CatalogFilters(regions=["us-east-1"], providers=["runpod"]), date.today(), 1, "en"
    )
    assert none.rows == [], "filters combine with AND"
    with pytest.raises(UnknownNameError, match="provider"):
        filter_catalog_table(catalog, CatalogFilters(providers=["nope"]), date.today(), 1, "en")


def test_vram_lines_are_distinct_gpus_of_the_top_options_then_extras() -> None:
    ranking = make_ranking([
        make_option(1, gpu="L40S"),
        make_option(2, gpu="L40S", instance_id="aws/g6e.2xlarge"),
        make_option(3, gpu="H100-SXM", vram_per_gpu_bytes=80 * GIB),
        make_option(4, gpu="A10", vram_per_gpu_bytes=24 * GIB),
    ])  # fmt: skip
    lines = vram_lines(ranking, extra_gpus=["RTX 4090", "no such gpu"], top=3)
    assert [(line.label, line.gib) for line in lines] == [
        ("H100-SXM 80 GiB", 80.0), ("L40S 48 GiB", 48.0), ("RTX4090 24 GiB", 24.0),
    ], "top 3 options give two GPUs; the alias resolves, the unknown name is skipped"  # fmt: skip


def test_memory_chart_and_breakdown_copy_the_estimate_in_gib() -> None:
    est = make_estimate(total_gpus=4)
    chart = memory_chart(est, [], "es")
    assert [(p.key, p.gib) for p in chart.parts] == [
        ("weights", 15.0), ("gradients", 0.08), ("optimizer", 0.5), ("activations", 4.25),
        ("overhead", 1.9),
    ]  # fmt: skip
    assert chart.total_gib == 21.73, "sum of the parts, 2 decimals"
    assert chart.title == "Llama 3.1 8B · Memoria por GPU (4 GPUs)"
    table = breakdown_table(est, "en")
    assert table.rows[0] == ["Weights", 15.0, int(15.0 * GIB)], "GiB and exact bytes"
    assert table.rows[-1] == ["Needed per GPU", 21.73, est.per_gpu.total]


@given(st.lists(st.integers(min_value=0, max_value=2**40), min_size=5, max_size=5))
def test_chart_parts_always_add_up_to_the_shown_total(parts: list[int]) -> None:
    weights, gradients, optimizer, activations, overhead = parts
    est = make_estimate(weights, gradients, optimizer, activations, overhead)
    chart = memory_chart(est, [], "en")
    assert abs(sum(p.gib for p in chart.parts) - chart.total_gib) < 0.03, "rounding only"


def test_passages_markdown_shows_title_topic_language_text_and_source() -> None:
    passage = Passage(
        topic="provider/spot-vs-on-demand", lang="nl", title="Spot of on-demand", text="Tekst.",
        source="knowledge/docs/nl/x.md", score=0.5, chunk_id="a#nl#0", query_lang="tr",
        lang_fallback=True,
    )  # fmt: skip
    assert passages_markdown([passage]) == (
        "### Spot of on-demand\n`provider/spot-vs-on-demand` · **nl** ↩\n\nTekst.\n\n"
        "<sub>knowledge/docs/nl/x.md</sub>"
    )
    assert passages_markdown([]) == ""
