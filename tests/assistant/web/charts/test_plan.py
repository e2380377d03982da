"""The panel's memory chart: each top option's own need against its own card, the same figures
as the ranked table, never a recommended card drawn too small."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from hypothesis import given
from hypothesis import strategies as st

from assistant.web import cells
from assistant.web.charts.plan import OPTIONS_DRAWN, nice_axis, plan_chart, render_plan_chart
from assistant.web.panel import compute_panel
from assistant.web.tables import ranked_tables
from tests.fakes.artifacts import make_estimate, make_option, make_ranking
from tools.catalog import builtin_catalog
from tools.job import JobSpec
from tools.units import GIB

NB = "\u00a0"


def _widths(html: str, cls: str) -> list[float]:
    root = ET.fromstring(html)
    found = [e for e in root.iter() if e.get("class") == cls]
    return [float(re.search(r"width:([\d.]+)%", e.get("style", "")).group(1)) for e in found]  # type: ignore[union-attr]


def test_each_bar_is_its_rows_need_against_its_card() -> None:
    ranking = make_ranking(
        [
            make_option(
                1,
                gpu="MI300X",
                vram_per_gpu_bytes=192 * GIB,
                need_per_gpu_bytes=int(151.7 * GIB),
                plan="single_offload",
            ),
            make_option(
                2,
                instance_id="aws/p5",
                gpu="H100-SXM",
                gpus_per_node=8,
                gpu_count=8,
                vram_per_gpu_bytes=80 * GIB,
                need_per_gpu_bytes=int(60 * GIB),
                plan="zero3",
            ),
        ]
    )
    chart = plan_chart(make_estimate(), ranking, "en")
    assert [b.label for b in chart.bars] == [
        "#1 · 1 × MI300X · a single GPU with the optimizer offloaded to CPU · on demand",
        "#2 · 8 × H100-SXM · ZeRO-3/FSDP · on demand",
    ]
    assert [b.figures for b in chart.bars] == [f"151.7 / 192{NB}GiB", f"60.0 / 80{NB}GiB"]
    assert [b.figures for b in chart.bars] == [
        row[4] for row in ranked_tables(ranking.ranked, {}, "en")[0].display
    ]
    html = render_plan_chart(chart, "en")
    assert _widths(html, "pc-track") == [96.0, 40.0], "cards on one axis of 200 GiB"
    assert _widths(html, "pc-need") == [79.01, 75.0], "need as a share of its own card"
    assert _widths(html, "pc-margin") == [7.9, 7.5], "the 10% margin, inside the card"
    assert 'data-rank="1"' in html and "pc-first" in html


def test_the_estimate_by_part_is_drawn_apart_on_its_own_scale() -> None:
    chart = plan_chart(make_estimate(), make_ranking([make_option()]), "tr")
    assert chart.parts_title == f"Parçalara göre, tek GPU üzerinde: 21,7{NB}GiB"
    html = render_plan_chart(chart, "tr")
    stack = ET.fromstring(html).find(".//*[@class='pc-stack']")
    assert stack is not None and len(stack) == 5, "five parts, none zero"
    assert "bar: " not in html and "çubuk:" in html, "the legend in the interface language"


def test_nothing_fits_says_so_instead_of_drawing() -> None:
    chart = plan_chart(make_estimate(), make_ranking([]), "de")
    assert (
        chart.bars == []
        and chart.empty == "Nichts passt: siehe die ausgeschlossenen Instanzen und warum."
    )
    assert "pc-rows" not in render_plan_chart(chart, "de")


def test_only_the_best_options_are_drawn() -> None:
    options = [make_option(i, instance_id=f"aws/g{i}") for i in range(1, 9)]
    assert [b.rank for b in plan_chart(None, make_ranking(options), "en").bars] == list(
        range(1, OPTIONS_DRAWN + 1)
    )


def test_text_is_escaped() -> None:
    html = render_plan_chart(
        plan_chart(make_estimate(name="<b>x</b>"), make_ranking([make_option(gpu="L40S")]), "en"),
        "en",
    )
    assert "<b>" not in html.replace("<b>GiB", "")


@given(
    vram=st.floats(min_value=8, max_value=300),
    share=st.floats(min_value=0.05, max_value=1 / 1.1),
    margin=st.floats(min_value=0, max_value=0.5),
)
def test_a_ranked_option_never_overflows_its_card(vram: float, share: float, margin: float) -> None:
    need = vram * share
    option = make_option(vram_per_gpu_bytes=int(vram * GIB), need_per_gpu_bytes=int(need * GIB))
    html = render_plan_chart(
        plan_chart(None, make_ranking([option], memory_margin=margin), "en"), "en"
    )
    assert sum(_widths(html, "pc-need") + _widths(html, "pc-margin")) <= 100.0001
    assert _widths(html, "pc-track")[0] <= 100.0


def test_nice_axis_ends_on_a_round_tick() -> None:
    assert nice_axis(192) == (200, 50) and nice_axis(80) == (80, 20) and nice_axis(23.6) == (25, 5)


def test_the_full_fine_tune_of_the_issue_draws_its_first_choice_as_fitting() -> None:
    data = compute_panel(
        JobSpec(model="llama 3.1 70b", method="full", tokens=2e8), builtin_catalog()
    )
    assert data.ranking is not None and data.estimate is not None
    chart = plan_chart(data.estimate, data.ranking, "en")
    table = ranked_tables(data.ranking.ranked, {}, "en")[0]
    assert [b.figures for b in chart.bars] == [row[4] for row in table.display[:OPTIONS_DRAWN]]
    assert all(b.need_gib + b.margin_gib <= b.vram_gib + 0.01 for b in chart.bars), "all fit"
    unsharded = cells.gib_of(data.estimate.per_gpu.total)
    assert chart.parts_title == f"By part, on one GPU: {cells.gib(unsharded, 'en')}", "apart"
    assert unsharded > 1000 > max(b.vram_gib for b in chart.bars), "no card holds it unsharded"
