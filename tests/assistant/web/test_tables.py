"""The app's tables from hand-built artifacts: key columns first, raw values to sort by, locale
text to show, links, and the component value carrying both."""

from __future__ import annotations

from datetime import UTC, date, datetime

from assistant.web.tables import (
    Table,
    breakdown_table,
    catalog_tables,
    excluded_table,
    ranked_tables,
)
from tests.fakes.artifacts import make_estimate, make_excluded, make_option
from tests.fakes.catalogs import make_instance
from tools.units import GIB

NB = "\u00a0"


def test_ranked_key_columns_are_what_matters_first_in_english() -> None:
    option = make_option(
        spot_total_cost=4.321, price_age_days=30, price_age_hours=720.0, stale=False
    )
    key, _ = ranked_tables([option], {}, "en")
    assert key.headers == [
        "#",
        "Instance",
        "GPUs",
        "Setup",
        "Need / VRAM per GPU",
        "$/h",
        "Hours",
        "Total $",
        "Spot total $",
        "Price age",
    ]
    assert key.rows == [
        [
            1,
            "aws/g6e.xlarge",
            "1 × L40S",
            "a single GPU · on demand",
            21.7,
            1.861,
            5.24,
            9.75,
            4.321,
            30,
        ]
    ], "raw values: numbers sort as numbers"
    assert key.display == [
        [
            "1",
            "aws/g6e.xlarge",
            "1 × L40S",
            "a single GPU · on demand",
            f"21.7 / 48{NB}GiB",
            "$1.86",
            "5.2",
            "$9.75",
            "$4.32",
            "30 days",
        ]
    ]
    assert key.datatypes[4:] == ["number"] * 6


def test_ranked_tables_speak_the_interface_language_and_flag_stale_prices() -> None:
    option = make_option(
        gpus_per_node=8,
        nodes=2,
        gpu_count=16,
        gpu="H100-SXM",
        plan="zero3",
        pricing="spot",
        price_age_days=187,
        price_age_hours=4488.0,
        stale=True,
    )
    key, more = ranked_tables([option], {}, "de")
    assert key.headers[3:5] == ["Aufbau", "Bedarf / VRAM pro GPU"]
    assert key.display[0][2:4] == ["2 × 8 × H100-SXM", "ZeRO-3/FSDP · Spot"]
    assert key.display[0][5] == f"1,86{NB}$" and key.display[0][9] == "⚠ 187 Tg."
    assert more.headers == [
        "#",
        "Instanz",
        "Anbieter",
        "Verbindung",
        "Freier Speicher",
        "GPU-Auslastung (MFU)",
        "Regionen",
        "Quelle",
        "Preisdatum",
    ]
    assert more.display[0][3:] == [
        "",
        f"121{NB}%",
        f"38{NB}%",
        "us-east-1",
        "[aws.amazon.com](https://aws.amazon.com/ec2/pricing/on-demand/)",
        "01.06.2025",
    ], "interconnect unknown without the catalog row; the source is a link"
    assert more.datatypes[7] == "markdown"


def test_the_table_value_carries_raw_data_and_display_text() -> None:
    table = Table(
        headers=["a", "b"], datatypes=["str", "number"], rows=[["x", 1.5]], display=[["x", "1,5"]]
    )
    assert table.value() == {
        "headers": ["a", "b"],
        "data": [["x", 1.5]],
        "metadata": {"display_value": [["x", "1,5"]], "styling": [["", ""]]},
    }
    empty = Table(headers=["a"], datatypes=["str"], rows=[], display=[])
    assert empty.value() == {"headers": ["a"], "data": [], "metadata": None}


def test_excluded_rows_give_the_tools_reason_in_english_and_the_rule_in_other_languages() -> None:
    excluded = make_excluded("memory", 1, gpu="T4")
    inst = make_instance(provider="gcp", instance_type="memory-0", gpu="T4", gpu_count=4)
    english = excluded_table(excluded, {inst.id: inst}, "en")
    assert english.display == [["gcp/memory-0", "4 × T4", "memory", "English memory"]]
    french = excluded_table(excluded, {}, "fr")
    assert french.headers == ["Instance", "GPU", "Règle", "Raison"]
    assert french.display == [
        [
            "gcp/memory-0",
            "T4",
            "mémoire",
            "mémoire GPU insuffisante, même avec partitionnement ou déport",
        ]
    ]


def test_catalog_tables_are_cheapest_per_gpu_hour_first_with_age_and_source() -> None:
    now = datetime(2025, 7, 1, 12, tzinfo=UTC)
    one = make_instance(as_of=date(2025, 6, 1))
    eight = make_instance(
        instance_type="p5.48xlarge",
        gpu="H100-SXM",
        gpu_count=8,
        price_per_hour=8.0,
        spot_price_per_hour=None,
        spot_available=False,
        interconnect="nvswitch",
        as_of=date(2024, 1, 1),
        source="https://aws.amazon.com/ec2/pricing/",
    )
    key, more = catalog_tables([one, eight], now, 120, "en")
    assert key.headers == [
        "Instance",
        "GPUs",
        "VRAM/GPU (GiB)",
        "$/h",
        "$/GPU-hour",
        "Spot $/h",
        "Spot $/GPU-hour",
        "Price age",
        "Source",
    ]
    assert [row[0] for row in key.rows] == ["aws/p5.48xlarge", "aws/g6e.xlarge"], "$1/GPU-h first"
    assert key.display[0] == [
        "aws/p5.48xlarge",
        "8 × H100-SXM",
        "80",
        "$8.00",
        "$1.00",
        "–",
        "–",
        "⚠ 547 days",
        "[aws.amazon.com](https://aws.amazon.com/ec2/pricing/)",
    ]
    assert key.display[1][5:8] == ["$0.90", "$0.90", "30 days"]
    assert key.rows[1][4] == 1.861 and key.rows[1][7] == 30, "numbers to sort by"
    assert more.headers == [
        "Instance",
        "Provider",
        "Interconnect",
        "Network",
        "Regions",
        "Billing",
        "Price date",
        "Price from",
    ]
    assert more.display[0] == [
        "aws/p5.48xlarge",
        "aws",
        "NVSwitch",
        "Ethernet",
        "us-east-1",
        "per second",
        "Jan 1, 2024",
        "built-in list",
    ]


def test_breakdown_shows_parts_in_gib_and_exact_bytes() -> None:
    table = breakdown_table(make_estimate(), "fr")
    assert table.headers == ["Mémoire par GPU", "GiB", "octets"]
    assert table.display[0] == ["Poids", "15,00", "16\u202f106\u202f127\u202f360"]
    assert table.rows[-1] == ["Requis par GPU", 21.73, table.rows[-1][2]] and table.rows[0][
        2
    ] == int(15 * GIB)
