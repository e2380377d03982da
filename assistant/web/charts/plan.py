"""The panel's memory chart: what each of the best options needs per GPU, against its own card.

The ranking gives every option its own parallel plan (one GPU, DDP, ZeRO-3 over eight cards, the
optimizer offloaded to CPU...) and so its own need per GPU. This chart draws exactly those figures,
the same the ranked table shows: for each of the top options a bar of its need per GPU, a lighter
stretch for the ranking's safety margin, inside a frame as long as the card's memory. A ranked
option fits by definition, so no recommended card is ever drawn too small. Above them, the job's
estimate by part (weights, gradients, optimizer state, activations, overhead) as the chat's
estimate set it up, on its own scale: how the memory divides, not a fit test.

Drawn as HTML and CSS bars (class names styled by the app), so the text keeps its size and wraps
on a phone; nothing is fetched, every text is escaped, figures are in the interface language.
"""

from __future__ import annotations

import math
from html import escape

from pydantic import BaseModel, Field

from assistant.answers.parts import Text
from assistant.web import cells
from assistant.web.charts import COLORS, PARTS
from assistant.web.tables import gpus_text, setup_text
from assistant.web.ui_strings import ui_format, ui_text
from tools.memory import MemoryEstimate
from tools.ranking import RankResult

__all__ = ["OPTIONS_DRAWN", "PlanBar", "PlanChart", "plan_chart", "render_plan_chart"]

OPTIONS_DRAWN = 5


class PlanBar(BaseModel):
    """One ranked option as drawn: its label, its need and margin, its card's memory."""

    rank: int
    label: str = Field(description="'#1 · 1 × MI300X · a single GPU · on demand'")
    need_gib: float = Field(description="need per GPU before the margin, GiB (as the table)")
    margin_gib: float = Field(description="the ranking's safety margin on that need, GiB")
    vram_gib: float = Field(description="memory per GPU of the card, GiB")
    figures: str = Field(description="'151.7 / 192 GiB', the table's need/VRAM text")


class PartBar(BaseModel):
    key: str
    label: str
    gib: float


class PlanChart(BaseModel):
    """The chart's content, every text already in the interface language."""

    title: str
    parts_title: str
    parts: list[PartBar]
    bars: list[PlanBar]
    legend: str
    empty: str | None = Field(description="what to say when no option fits")


def _setup(estimate: MemoryEstimate, lang: str) -> str:
    t = Text(lang)
    if estimate.total_gpus <= 1:
        return t.msg("memory.setup_single")
    return t.plural("memory.setup_multi_plain", estimate.total_gpus)


def plan_chart(
    estimate: MemoryEstimate | None, ranking: RankResult | None, lang: str, top: int = OPTIONS_DRAWN
) -> PlanChart:
    """The chart of the `top` best options of `ranking`, with `estimate` by part above them."""
    parts: list[PartBar] = []
    parts_title = ""
    if estimate is not None:
        parts = [
            PartBar(
                key=k,
                label=ui_text(lang, f"part_{k}"),
                gib=cells.gib_of(getattr(estimate.per_gpu, k), 2),
            )
            for k in PARTS
        ]
        total = cells.gib(cells.gib_of(estimate.per_gpu.total), lang)
        parts_title = f"{ui_format(lang, 'chart_parts', setup=_setup(estimate, lang))}: {total}"
    margin = ranking.job.memory_margin if ranking is not None else 0.0
    bars = [
        PlanBar(
            rank=o.rank,
            label=f"#{o.rank} · {gpus_text(o)} · {setup_text(o, lang)}",
            need_gib=cells.gib_of(o.need_per_gpu_bytes, 2),
            margin_gib=cells.gib_of(o.need_per_gpu_bytes * margin, 2),
            vram_gib=cells.gib_of(o.vram_per_gpu_bytes, 2),
            figures=cells.need_of_vram(o.need_per_gpu_bytes, o.vram_per_gpu_bytes, lang),
        )
        for o in (ranking.ranked[:top] if ranking is not None else [])
    ]
    empty = ui_text(lang, "chart_nothing_fits") if ranking is not None and not bars else None
    return PlanChart(
        title=ui_text(lang, "plan_chart_title"),
        parts_title=parts_title,
        parts=parts,
        bars=bars,
        legend=ui_format(lang, "plan_chart_legend", margin=cells.percent(margin, lang)),
        empty=empty,
    )


def nice_axis(value: float) -> tuple[float, float]:
    """(axis end, tick step): a round end at or above `value`, ticks every 1, 2 or 5 x 10^n,
    at most five of them after zero."""
    raw = max(value, 1e-9) / 5
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    return math.ceil(value / step) * step, step


def _pct(part: float, whole: float) -> str:
    return f"{100 * part / whole:.2f}%" if whole > 0 else "0%"


def _parts_html(chart: PlanChart, lang: str) -> str:
    """The estimate by part: a stacked bar on its own scale and a legend."""
    total = sum(p.gib for p in chart.parts)
    if not chart.parts or total <= 0:
        return ""
    stack = "".join(
        f'<span style="width:{_pct(p.gib, total)};background:{COLORS[p.key]}" '
        f'title="{escape(p.label)}: {escape(cells.gib(p.gib, lang))}"></span>'
        for p in chart.parts
        if p.gib > 0
    )
    legend = "".join(
        f'<li><i style="background:{COLORS[p.key]}"></i>{escape(p.label)} '
        f"{escape(cells.gib(p.gib, lang))}</li>"
        for p in chart.parts
    )
    return (
        f'<div class="pc-parts"><div class="pc-sub">{escape(chart.parts_title)}</div>'
        f'<div class="pc-stack">{stack}</div><ul class="pc-legend">{legend}</ul></div>'
    )


def _bar_html(bar: PlanBar, axis_max: float) -> str:
    margin = min(bar.margin_gib, max(bar.vram_gib - bar.need_gib, 0.0))
    whole = bar.vram_gib if bar.vram_gib > 0 else 1.0
    need = round(100 * bar.need_gib / whole, 2)
    margin_pct = min(round(100 * margin / whole, 2), round(100 - need, 2))  # both, as rounded
    first = " pc-first" if bar.rank == 1 else ""
    return (
        f'<li class="pc-row{first}" data-rank="{bar.rank}">'
        f'<div class="pc-label"><span>{escape(bar.label)}</span>'
        f'<span class="pc-fig">{escape(bar.figures)}</span></div>'
        f'<div class="pc-track" style="width:{_pct(bar.vram_gib, axis_max)}">'
        f'<span class="pc-need" style="width:{need:.2f}%"></span>'
        f'<span class="pc-margin" style="width:{margin_pct:.2f}%"></span></div></li>'
    )


def _axis_html(axis_max: float, step: float, lang: str) -> str:
    """Tick labels under the bars; the last one carries the unit and ends at the axis end."""
    count = round(axis_max / step)
    ticks = []
    for i in range(count + 1):
        value = i * step
        text = cells.number(value, lang, 0 if value == round(value) else 1)
        if i == count:
            text = f"{text}{cells.NBSP}GiB"
        edge = ' class="pc-start"' if i == 0 else ' class="pc-end"' if i == count else ""
        ticks.append(f'<span{edge} style="left:{_pct(value, axis_max)}">{escape(text)}</span>')
    return f'<div class="pc-axis">{"".join(ticks)}</div>'


def render_plan_chart(chart: PlanChart, lang: str) -> str:
    """The chart as one HTML <figure>: title, the estimate by part, one bar per option on a
    common GiB axis, and the legend (or why nothing is drawn)."""
    rows = ""
    if chart.bars:
        axis_max, step = nice_axis(max(b.vram_gib for b in chart.bars))
        bars = "".join(_bar_html(bar, axis_max) for bar in chart.bars)
        rows = f'<ol class="pc-rows">{bars}</ol>{_axis_html(axis_max, step, lang)}'
    note = chart.empty if chart.empty is not None else chart.legend if chart.bars else ""
    summary = "; ".join(f"#{b.rank} {b.figures}" for b in chart.bars) or chart.parts_title
    return (
        f'<figure class="plan-chart" aria-label="{escape(chart.title)}: {escape(summary)}">'
        f'<figcaption class="pc-title">{escape(chart.title)}</figcaption>'
        f"{_parts_html(chart, lang)}{rows}"
        + (f'<p class="chart-note">{escape(note)}</p>' if note else "")
        + "</figure>"
    )
