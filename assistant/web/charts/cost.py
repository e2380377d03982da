"""The panel's cost-against-time chart: every option that fits, total cost against run hours.

Each point is one ranked row (an instance at a pricing, with its plan): x its expected hours, y its
expected total in USD, filled by GPU type (the first `len(PALETTE) - 1` types by rank each with its
own colour, any others grey as one legend entry: a colour reused for two GPUs would read as one), a
triangle when the row is priced on spot. The first
choice is ringed and labelled; the Pareto front (the options that nothing else beats on both cost
and time) is joined by a line. Hovering a point shows its row, with the figures written as the
table writes them. `cost_points` and `pareto_front` are plain data; `cost_chart` draws them with
Vega-Altair, which the app's plot component renders in the browser (nothing is fetched).

A chart is its Vega-Lite specification (a dict) with the points as its data. What Altair builds
and checks against the Vega-Lite schema is the chart without its data and without its colour
domain, once per language and pair of axis scales (a few dozen in all); every panel then copies
it and adds its points and its GPU types. Building and validating the whole chart with its
points took about 25 ms of CPU a turn, most of it Altair copying the points between layers and
the schema check walking each of them; keyed by the GPU set too, nearly every new job missed
the cache and paid about 3 ms for Altair again.

Gradio's plot component themes a chart marked 'line' (the kind it fits to its container's width):
it replaces the whole `config`, and the range of every layer's `color` scale by its own shorter
cycle of colours. The points are therefore coloured through the `fill` channel, which it leaves
alone, and what the chart needs of its layout (the width it fits, the legends' places) is set on
the chart and its encodings, not in `config`. On a phone the GPU and pricing legends side by
side below the plot were wider than the screen, and above the plot the component's title covers
a legend: the GPU legend is the only one, below the plot in two columns of bounded labels, and the
caption under the chart says that a triangle is a spot price.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from babel import Locale
from pydantic import BaseModel, Field

from assistant.web import cells
from assistant.web.tables import gpus_text, setup_text
from assistant.web.ui_strings import ui_format, ui_text, vocabulary
from tools.ranking.models import RankedOption

__all__ = ["CostPoint", "cost_caption", "cost_chart", "cost_points", "pareto_front"]

LOG_RATIO = 30.0  # an axis spanning more than this factor is drawn on a log scale
HEIGHT = 320
FIRST_COLOR = "#d62728"
LEGEND_COLUMNS = 2
LEGEND_LABEL_PX = 110  # longest GPU name shown whole in the legend (two columns fit 300 px)
LABEL_GAP_PX = 6  # the least space between two axis labels (log axes crowd their tick labels)
OTHER_COLOR = "#9e9e9e"
CACHED_CHARTS = 64  # chart specifications kept without their data (a few kB each)
# Tableau 20: a colour each for up to 20 GPU types (past 20, see `coloured_gpus`).
PALETTE = [
    "#4e79a7",
    "#f28e2b",
    "#e15759",
    "#76b7b2",
    "#59a14f",
    "#edc948",
    "#b07aa1",
    "#ff9da7",
    "#9c755f",
    "#bab0ac",
    "#1f77b4",
    "#aec7e8",
    "#ff7f0e",
    "#ffbb78",
    "#2ca02c",
    "#98df8a",
    "#9467bd",
    "#c5b0d5",
    "#8c564b",
    "#c49c94",
]


class CostPoint(BaseModel):
    """One option as a point, with the texts its tooltip shows."""

    rank: int
    instance: str
    gpu: str
    gpu_group: str = Field(description="the GPU, or the 'other GPU types' label: its colour")
    gpus: str = Field(description="'8 × H100-SXM'")
    setup: str = Field(description="plan and pricing in the interface language")
    pricing: str = Field(description="'on-demand' or 'spot'")
    pricing_label: str
    hours: float
    total: float = Field(description="expected USD for the run at this row's pricing")
    hours_text: str
    total_text: str
    price_text: str
    first: bool
    pareto: bool


def pareto_front(options: Sequence[RankedOption]) -> set[int]:
    """The ranks of the options no other option beats on both hours and total cost (cheaper and
    not slower, or faster and not dearer)."""
    front: set[int] = set()
    best_total = math.inf
    for option in sorted(options, key=lambda o: (o.hours, o.total_cost, o.rank)):
        if option.total_cost < best_total:
            front.add(option.rank)
            best_total = option.total_cost
    return front


def coloured_gpus(options: Sequence[RankedOption]) -> list[str]:
    """The GPU types that get a colour of their own: the first `len(PALETTE) - 1` by their best
    rank, in that order (the last colour of the palette is never used, so none repeats)."""
    named: list[str] = []
    for option in sorted(options, key=lambda o: o.rank):
        if option.gpu not in named:
            named.append(option.gpu)
    return named if len(named) <= len(PALETTE) else named[: len(PALETTE) - 1]


def cost_points(options: Sequence[RankedOption], lang: str) -> list[CostPoint]:
    """Every option as a point, best first; the first option is the first choice."""
    front = pareto_front(options)
    first = options[0].rank if options else None
    named = set(coloured_gpus(options))
    other = ui_text(lang, "legend_other_gpus")
    return [
        CostPoint(
            rank=o.rank,
            instance=o.instance_id,
            gpu=o.gpu,
            gpu_group=o.gpu if o.gpu in named else other,
            gpus=gpus_text(o),
            setup=setup_text(o, lang),
            pricing=o.pricing,
            pricing_label=vocabulary(lang, "pricing", o.pricing),
            hours=o.hours,
            total=o.total_cost,
            hours_text=cells.hours(o.hours, lang),
            total_text=cells.money(o.total_cost, lang),
            price_text=cells.money(o.price_per_hour, lang),
            first=o.rank == first,
            pareto=o.rank in front,
        )
        for o in options
    ]


def cost_caption(points: Sequence[CostPoint], lang: str) -> str:
    """The line under the chart: how many options, and how to read the marks."""
    return ui_format(lang, "cost_chart_caption", count=cells.count(len(points), lang))


def axis_labels(lang: str) -> str:
    """A Vega expression writing an axis value with the locale's separators ('1 234,5' in
    French): d3's English format, then its group and decimal marks swapped for the locale's
    (the plot component replaces a chart's own locale configuration with its theme)."""
    symbols = Locale.parse(lang).number_symbols["latn"]
    text = "format(datum.value, ',~f')"
    for old, new in ((",", "\u0001"), ("\\.", symbols["decimal"]), ("\u0001", symbols["group"])):
        text = f"replace({text}, regexp({json.dumps(old)}, 'g'), {json.dumps(new)})"
    return text


def _scale(values: Sequence[float]) -> tuple[tuple[str, Any], ...]:
    low, high = min(values), max(values)
    if low > 0 and high / low > LOG_RATIO:
        return (("type", "log"),)
    return (("zero", True),)


def cost_chart(points: Sequence[CostPoint], lang: str) -> dict[str, Any]:
    """The chart's Vega-Lite specification: points coloured by GPU and shaped by pricing, the
    Pareto front as a line, the first choice ringed and labelled; tooltips with the row's
    figures; `points` as its data."""
    x_scale = _scale([p.hours for p in points] or [1.0])
    y_scale = _scale([p.total for p in points] or [1.0])
    spec: dict[str, Any] = json.loads(_spec_without_data(lang, x_scale, y_scale))
    named = sorted({p.gpu_group for p in points if p.gpu_group == p.gpu})
    others = sorted({p.gpu_group for p in points if p.gpu_group != p.gpu})
    for layer in spec["layer"]:
        fill = layer.get("encoding", {}).get("fill")
        if fill is not None:  # a list of names: what the schema asks of a domain
            fill["scale"]["domain"] = named + others
            fill["scale"]["range"] = PALETTE[: len(named)] + [OTHER_COLOR] * len(others)
    spec["data"] = {"values": [p.model_dump() for p in points]}
    return spec


def _embed_options(lang: str) -> dict[str, Any]:
    """What vega-embed (Gradio's chart renderer) reads from the chart: its actions menu in
    `lang`, saving the picture only (no source, and no "Open in Vega Editor", which would send
    the chart's data to an outside site)."""
    return {
        "actions": {"export": True, "source": False, "compiled": False, "editor": False},
        "i18n": {
            "CLICK_TO_VIEW_ACTIONS": ui_text(lang, "chart_actions"),
            "PNG_ACTION": ui_text(lang, "chart_save_png"),
            "SVG_ACTION": ui_text(lang, "chart_save_svg"),
        },
    }


@lru_cache(maxsize=CACHED_CHARTS)
def _spec_without_data(
    lang: str, x_scale: tuple[tuple[str, Any], ...], y_scale: tuple[tuple[str, Any], ...]
) -> str:
    """The chart for `lang` with those axis scales, no points and an empty colour domain (the
    GPU types, `cost_chart` fills it in), as Altair builds and validates it (JSON; every layer
    reads the chart's one dataset)."""
    import altair as alt

    labels = axis_labels(lang)
    x = alt.X(
        "hours:Q",
        title=ui_text(lang, "axis_hours"),
        axis=alt.Axis(labelExpr=labels, labelOverlap="greedy", labelSeparation=LABEL_GAP_PX),
        scale=alt.Scale(**dict(x_scale)),
    )
    y = alt.Y(
        "total:Q",
        title=ui_text(lang, "axis_total"),
        axis=alt.Axis(labelExpr=labels, labelOverlap="greedy", labelSeparation=LABEL_GAP_PX),
        scale=alt.Scale(**dict(y_scale)),
    )
    tooltip = [
        alt.Tooltip("rank:Q", title="#"),
        alt.Tooltip("instance:N", title=ui_text(lang, "col_instance")),
        alt.Tooltip("gpus:N", title=ui_text(lang, "col_gpus")),
        alt.Tooltip("setup:N", title=ui_text(lang, "col_plan")),
        alt.Tooltip("price_text:N", title=ui_text(lang, "col_price")),
        alt.Tooltip("hours_text:N", title=ui_text(lang, "col_hours")),
        alt.Tooltip("total_text:N", title=ui_text(lang, "col_total")),
    ]
    spot, on_demand = vocabulary(lang, "pricing", "spot"), vocabulary(lang, "pricing", "on-demand")
    shape = alt.Shape(
        "pricing_label:N",
        title=ui_text(lang, "legend_pricing"),
        scale=alt.Scale(domain=[on_demand, spot], range=["circle", "triangle-up"]),
        legend=None,  # the caption under the chart says what a triangle is
    )
    fill = alt.Fill(
        "gpu_group:N",
        title=ui_text(lang, "legend_gpu"),
        scale=alt.Scale(domain=[], range=PALETTE),
        legend=alt.Legend(orient="bottom", columns=LEGEND_COLUMNS, labelLimit=LEGEND_LABEL_PX),
    )
    base = alt.Chart(alt.Data(values=[]))
    dots = base.mark_point(filled=True, size=70, opacity=0.85, strokeWidth=0).encode(
        x=x, y=y, fill=fill, shape=shape, tooltip=tooltip
    )
    front = (
        base.transform_filter("datum.pareto")
        .mark_line(stroke="#555", strokeDash=[4, 3], strokeWidth=1.5)
        .encode(x=x, y=y, order="hours:Q")
    )
    first = base.transform_filter("datum.first")
    ring = first.mark_point(
        shape="circle", size=420, filled=False, strokeWidth=2.5, stroke=FIRST_COLOR
    ).encode(x=x, y=y, tooltip=tooltip)
    label = first.mark_text(
        align="left", dx=14, dy=-10, fontWeight="bold", fill=FIRST_COLOR, strokeWidth=0
    ).encode(x=x, y=y, text=alt.value(f"#1 {ui_text(lang, 'first_choice')}"))
    # The plot area keeps its height; the legends (one GPU type a row per column: 30 types
    # are 15 rows) add theirs below. Gradio fits an Altair chart whole into its height
    # (config autosize "fit"), which left the points a strip of about 50 px.
    fit_width = alt.AutoSizeParams(type="fit-x", contains="padding")
    chart = alt.layer(front, dots, ring, label).properties(
        height=HEIGHT,
        autosize=fit_width,
        description=ui_text(lang, "cost_chart_description"),  # the chart's aria-label
        usermeta={"embedOptions": _embed_options(lang)},
    )
    spec = chart.to_dict()  # validated against the Vega-Lite schema here
    if spec.get("data") != {"values": []} or any("data" in layer for layer in spec["layer"]):
        raise RuntimeError("the cost chart's layers must share the chart's one dataset")
    return json.dumps(spec)
