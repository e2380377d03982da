"""Figures as the interface writes them: the answers' locale formats, GiB everywhere, links."""

from __future__ import annotations

from datetime import date

import pytest

from assistant.web import cells
from tools.units import GIB

NB, NNB = "\u00a0", "\u202f"


@pytest.mark.parametrize(
    ("lang", "price", "total"),
    [
        ("en", "$1.80", "$1,234.50"),
        ("nl", f"US${NB}1,80", f"US${NB}1.234,50"),
        ("fr", f"1,80{NB}$US", f"1{NNB}234,50{NB}$US"),
        ("tr", "$1,80", "$1.234,50"),
        ("de", f"1,80{NB}$", f"1.234,50{NB}$"),
        ("es", f"1,80{NB}US$", f"1.234,50{NB}US$"),
    ],
)
def test_money_has_cents_in_the_locale(lang: str, price: str, total: str) -> None:
    assert (cells.money(1.8, lang), cells.money(1234.5, lang)) == (price, total)


def test_no_amount_is_a_dash_and_numbers_follow_the_locale() -> None:
    assert cells.money(None, "de") == "–"
    assert (cells.number(21.84, "fr"), cells.number(21.84, "en")) == ("21,8", "21.8")
    assert cells.count(8_030_261_248, "fr") == f"8{NNB}030{NNB}261{NNB}248"
    assert cells.gib(30.14, "tr") == f"30,1{NB}GiB"
    assert cells.percent(0.209, "tr") == "%21"
    assert cells.hours(0.5, "en") == "0.50" and cells.hours(123.4, "de") == "123"
    assert cells.day(date(2026, 5, 28), "de") == "28.05.2026"


def test_need_against_vram_is_the_tables_and_the_charts_text() -> None:
    assert cells.need_of_vram(151.7 * GIB, 192 * GIB, "en") == f"151.7 / 192{NB}GiB"
    assert cells.need_of_vram(30.1 * GIB, 23.65 * GIB, "fr") == f"30,1 / 23,6{NB}GiB"


def test_price_ages_count_hours_for_fresh_refreshes_and_days_otherwise() -> None:
    assert cells.age_cell(187, 4500.0, False, "fr") == f"187{NNB}j"
    assert cells.age_cell(0, 3.4, True, "tr") == "3 sa."
    assert cells.age_cell(0, 0.2, True, "de") == "jetzt"
    assert cells.age_cell(3, 80.0, True, "en") == "3 days", "two days and more: days"
    assert cells.age_cell(None, None, False, "en") == "–"


@pytest.mark.parametrize(
    ("source", "link"),
    [
        (
            "Amazon EC2 On-Demand pricing, https://aws.amazon.com/ec2/pricing/on-demand/, as of",
            "[aws.amazon.com](https://aws.amazon.com/ec2/pricing/on-demand/)",
        ),
        (
            "SkyPilot catalog (skypilot-org/skypilot-catalog) catalogs/v9",
            "[github.com/skypilot-org/skypilot-catalog](https://github.com/skypilot-org/skypilot-catalog)",
        ),
        (
            "anycloud-sh/catalog azure/vms.csv @62ff0a98",
            "[github.com/anycloud-sh/catalog](https://github.com/anycloud-sh/catalog)",
        ),
        ("aws pricing page", "aws pricing page"),
        ("see https://www.runpod.io/pricing.", "[runpod.io](https://www.runpod.io/pricing)"),
    ],
)
def test_sources_become_links_to_what_they_name(source: str, link: str) -> None:
    assert cells.source_link(source, "en") == link


def test_link_text_brackets_are_escaped() -> None:
    assert cells.link("https://x.org", "a [b]") == r"[a \[b\]](https://x.org)"
