"""The cost-against-time chart: every option a point, the Pareto front and the first choice
marked, spot shaped apart, tooltips with the table's texts, axes in the locale."""

from __future__ import annotations

from typing import Any

from assistant.web.charts.cost import (
    HEIGHT,
    OTHER_COLOR,
    PALETTE,
    axis_labels,
    cost_caption,
    cost_chart,
    cost_points,
    pareto_front,
)
from tests.fakes.artifacts import make_option


def _options() -> list[Any]:
    rows = [  # rank, hours, total, gpu, pricing
        (1, 50.0, 100.0, "MI300X", "on-demand"),
        (2, 68.0, 122.0, "H100-SXM", "on-demand"),
        (3, 6.3, 101.0, "MI300X", "on-demand"),
        (4, 3.8, 90.0, "B200", "spot"),
        (5, 3.8, 95.0, "B200", "on-demand"),
        (6, 200.0, 80.0, "L4", "spot"),
    ]
    return [
        make_option(
            rank, instance_id=f"p/{rank}", hours=hours, total_cost=total, gpu=gpu, pricing=pricing
        )
        for rank, hours, total, gpu, pricing in rows
    ]


def test_the_pareto_front_is_what_nothing_beats_on_both_cost_and_time() -> None:
    assert pareto_front(_options()) == {4, 6}, "fastest and cheapest; #3 is beaten by #4"
    assert pareto_front([]) == set()


def test_points_carry_the_rows_figures_as_the_table_writes_them() -> None:
    points = cost_points(_options(), "de")
    assert [(p.rank, p.first, p.pareto) for p in points][:4] == [
        (1, True, False),
        (2, False, False),
        (3, False, False),
        (4, False, True),
    ]
    spot = points[3]
    assert (spot.pricing_label, spot.hours_text, spot.total_text, spot.price_text) == (
        "Spot",
        "3,8",
        "90,00\u00a0$",
        "1,86\u00a0$",
    )
    assert spot.setup == "eine einzelne GPU · Spot"
    assert cost_caption(points, "en").startswith("6 options. Ringed: the first choice;")


def test_the_chart_layers_front_points_and_the_ringed_first_choice() -> None:
    spec = cost_chart(cost_points(_options(), "fr"), "fr")
    front, dots, ring, label = spec["layer"]
    assert front["mark"]["type"] == "line" and front["transform"] == [{"filter": "datum.pareto"}]
    assert dots["encoding"]["fill"]["field"] == "gpu_group"
    assert all("color" not in layer["encoding"] for layer in spec["layer"]), "Gradio recolours it"
    assert dots["encoding"]["shape"]["field"] == "pricing_label"
    assert dots["encoding"]["shape"]["scale"] == {
        "domain": ["à la demande", "spot"],
        "range": ["circle", "triangle-up"],
    }
    assert [t["field"] for t in dots["encoding"]["tooltip"]] == [
        "rank",
        "instance",
        "gpus",
        "setup",
        "price_text",
        "hours_text",
        "total_text",
    ]
    assert dots["encoding"]["x"]["title"] == "Durée (heures)"
    assert dots["encoding"]["y"]["title"] == "Coût total (USD)"
    assert ring["transform"] == [{"filter": "datum.first"}] and ring["mark"]["size"] == 420
    assert label["encoding"]["text"] == {"value": "#1 premier choix"}
    assert dots["encoding"]["x"]["scale"] == {"type": "log"}, "3.8 h to 200 h: a log axis"
    assert dots["encoding"]["y"]["scale"] == {"zero": True}, "80 to 122 USD: linear from zero"
    assert len(spec["data"]["values"]) == 6


def test_axis_numbers_use_the_locales_separators() -> None:
    assert axis_labels("en") == (
        """replace(replace(replace(format(datum.value, ',~f'), regexp(",", 'g'), "\\u0001"), """
        """regexp("\\\\.", 'g'), "."), regexp("\\u0001", 'g'), ",")"""
    )
    assert axis_labels("de").endswith(
        'regexp("\\\\.", \'g\'), ","), regexp("\\u0001", \'g\'), ".")'
    )


def test_a_chart_is_valid_vega_lite_with_its_own_points_only() -> None:
    """Charts share a template without data: each gets its own points, and the whole spec,
    points included, passes Altair's Vega-Lite schema check."""
    import altair as alt

    options = _options()
    few = cost_chart(cost_points(options[:3], "en"), "en")
    many = cost_chart(cost_points(options, "en"), "en")
    again = cost_chart(cost_points(options[:3], "en"), "en")
    assert [p["rank"] for p in few["data"]["values"]] == [1, 2, 3]
    assert [p["rank"] for p in many["data"]["values"]] == [1, 2, 3, 4, 5, 6]
    assert again == few, "the cached template is copied, never changed"
    assert all("data" not in layer for layer in many["layer"])
    alt.LayerChart.from_dict(many, validate=True)  # raises on an invalid spec
    assert many["layer"][1]["encoding"]["fill"]["scale"]["domain"] == [
        "B200",
        "H100-SXM",
        "L4",
        "MI300X",
    ]


def test_jobs_with_other_gpu_types_share_one_checked_template() -> None:
    """Altair builds and checks a chart once per language and axis scales, not once per GPU
    set: a new job's GPU types are only the colour domain, filled in on a copy."""
    from assistant.web.charts.cost import _spec_without_data

    options = _options()
    _spec_without_data.cache_clear()
    first = cost_chart(cost_points(options[:2], "nl"), "nl")  # MI300X, H100-SXM
    second = cost_chart(cost_points(options[3:5], "nl"), "nl")  # B200 alone
    info = _spec_without_data.cache_info()
    assert (info.misses, info.hits) == (1, 1)
    assert first["layer"][1]["encoding"]["fill"]["scale"]["domain"] == ["H100-SXM", "MI300X"]
    assert second["layer"][1]["encoding"]["fill"]["scale"]["domain"] == ["B200"]
    assert first["layer"][1]["encoding"]["fill"]["scale"]["range"] == ["#4e79a7", "#f28e2b"]
    assert all("fill" not in layer["encoding"] for i, layer in enumerate(first["layer"]) if i != 1)


def test_the_points_sit_where_altair_puts_a_charts_data() -> None:
    """The spec round-trips through Altair's chart model with its points as the chart's data."""
    import altair as alt

    points = cost_points(_options(), "de")
    spec = cost_chart(points, "de")
    template = {**spec, "data": {"values": []}}
    built = alt.LayerChart.from_dict(template, validate=False)
    built.data = alt.Data(values=[p.model_dump() for p in points])
    assert built.to_dict() == spec


def test_the_plot_keeps_its_height_and_the_legends_go_below_it() -> None:
    """Gradio fits an Altair chart whole into its height (config autosize "fit"): with 30 GPU
    types in the legend that left the points about 50 px. The chart's own autosize fits the
    width only, so the plot keeps its height and the legends add theirs."""
    spec = cost_chart(cost_points(_options(), "en"), "en")
    assert spec["height"] == HEIGHT
    assert spec["autosize"] == {"type": "fit-x", "contains": "padding"}
    dots = spec["layer"][1]["encoding"]
    assert dots["fill"]["legend"]["orient"] == "bottom" and dots["fill"]["legend"]["columns"] == 2
    assert dots["shape"]["legend"] is None, "beside the GPU legend it was wider than a phone"
    assert "triangles: spot prices" in cost_caption(cost_points(_options(), "en"), "en")


def test_no_two_gpu_types_share_a_colour() -> None:
    """Past the palette's 20 colours, the best-ranked 19 GPU types keep one each and the rest
    are grey under one 'other GPU types' entry; a repeated colour would read as one GPU."""
    options = [
        make_option(rank, instance_id=f"p/{rank}", gpu=f"G{rank:02d}", hours=rank, total_cost=9)
        for rank in range(1, 26)
    ]
    options.append(make_option(26, instance_id="p/26", gpu="G03", hours=30.0, total_cost=9.0))
    spec = cost_chart(cost_points(options, "fr"), "fr")
    scale = spec["layer"][1]["encoding"]["fill"]["scale"]
    assert scale["domain"] == [f"G{n:02d}" for n in range(1, 20)] + ["autres types de GPU"]
    assert scale["range"] == [*PALETTE[:19], OTHER_COLOR]
    assert len(set(scale["range"])) == len(scale["range"]), "each colour names one entry"
    groups = {p["instance"]: p["gpu_group"] for p in spec["data"]["values"]}
    assert groups["p/26"] == "G03" and groups["p/20"] == groups["p/25"] == "autres types de GPU"
    few = cost_points(options[:20], "en")
    assert [p.gpu_group for p in few] == [p.gpu for p in few], "20 types: a colour each"
