"""The Memory estimator tab's chart as a self-contained SVG string: nothing is fetched.

One horizontal bar stacks the per-GPU parts of one estimate (weights, gradients, optimizer state,
activations, overhead, in GiB); a dashed vertical line marks each GPU the user compares it with,
green when the estimate fits under it and red when it does not. This is the estimate as set up in
the tab (its GPU count and sharding); the advisor's panel draws each ranked option's own plan
instead (`assistant.web.charts.plan`). Figures are written in the interface language; every text
is escaped.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from html import escape

from pydantic import BaseModel, Field

from assistant.answers.parts import Text
from assistant.web import cells
from assistant.web.ui_strings import ui_text
from tools.gpus import find_gpu
from tools.memory import MemoryEstimate
from tools.units import GIB

PARTS = ("weights", "gradients", "optimizer", "activations", "overhead")


class ChartPart(BaseModel):
    key: str = Field(description="weights, gradients, optimizer, activations or overhead")
    label: str
    gib: float = Field(ge=0, description="GiB (2^30 bytes) per GPU")


class VramLine(BaseModel):
    label: str = Field(description="GPU name as shown, e.g. 'H100-SXM 80 GiB'")
    gib: float = Field(gt=0, description="memory per GPU, GiB")


class MemoryChart(BaseModel):
    """A stacked bar of one GPU's memory by part, drawn against candidate GPUs' capacities."""

    title: str
    parts: list[ChartPart]
    total_gib: float
    lines: list[VramLine]
    total_label: str


def _gib(n_bytes: float, digits: int = 1) -> float:
    return round(n_bytes / GIB, digits)


def vram_lines(gpus: Sequence[str], lang: str = "en") -> list[VramLine]:
    """Capacities to draw for GPU names (unknown ones are skipped), largest first, each once,
    labelled 'H100-SXM 80 GiB' with the number in `lang`."""
    seen: dict[str, float] = {}
    for name in gpus:
        spec = find_gpu(name)
        if spec is not None:
            seen.setdefault(spec.id, round(spec.vram_gib, 1))
    ordered = sorted(seen.items(), key=lambda item: (-item[1], item[0]))
    return [
        VramLine(label=f"{gpu} {_fmt(gib, lang)} GiB".replace(" GiB", "\u00a0GiB"), gib=gib)
        for gpu, gib in ordered
    ]


def memory_chart(estimate: MemoryEstimate, lines: Sequence[VramLine], lang: str) -> MemoryChart:
    """The estimate's per-GPU parts (GiB) as a stacked bar, with the given VRAM lines."""
    per_gpu = estimate.per_gpu
    parts = [
        ChartPart(key=key, label=ui_text(lang, f"part_{key}"), gib=_gib(getattr(per_gpu, key), 2))
        for key in PARTS
    ]
    gpus = estimate.total_gpus
    title = f"{estimate.model_name} · {ui_text(lang, 'memory_chart')}"
    if gpus > 1:
        title += f" · {Text(lang).plural('memory.setup_multi_plain', gpus)}"
    return MemoryChart(
        title=title,
        parts=parts,
        total_gib=_gib(per_gpu.total, 2),
        lines=list(lines),
        total_label=ui_text(lang, "chart_need"),
    )


COLORS = {
    "weights": "#4e79a7",
    "gradients": "#f28e2b",
    "optimizer": "#e15759",
    "activations": "#76b7b2",
    "overhead": "#9c9c9c",
}
FITS, DOES_NOT_FIT = "#2e7d32", "#c62828"
WIDTH, LEFT, RIGHT = 560, 12, 22
HEADER, LABEL_ROW, BAR_HEIGHT = 52, 16, 40
_FONT = "font-family:system-ui,sans-serif"
TITLE_CHARS = 50  # longer titles are cut with an ellipsis (the full one is in aria-label)
Scale = Callable[[float], float]  # GiB -> x in the viewBox


def _nice_step(span: float) -> float:
    """A round tick step giving about five ticks over `span` (1, 2 or 5 x 10^n)."""
    raw = max(span, 1e-9) / 5
    power = 10 ** math.floor(math.log10(raw))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= raw)


def _fmt(gib: float, lang: str) -> str:
    """'30.1', '141', '23,7': one decimal under 100 GiB, none for a whole number or from 100."""
    whole = gib >= 100 or gib == round(gib)
    return cells.number(gib, lang, 0 if whole else 1)


def render_memory_chart(chart: MemoryChart, lang: str = "en") -> str:
    """The chart as an inline <svg> element (scales to its container's width), its figures in
    `lang`."""
    top = max([chart.total_gib, *(line.gib for line in chart.lines), 1.0])
    step = _nice_step(top)
    axis_max = math.ceil(top * 1.05 / step) * step
    span = WIDTH - LEFT - RIGHT
    bar_top = HEADER + LABEL_ROW * len(chart.lines) + 6

    def x(gib: float) -> float:
        return LEFT + span * gib / axis_max

    body = [_title(chart, lang), *_bar(chart, x, bar_top, lang)]
    body += [*_axis(axis_max, step, x, bar_top, lang), *_vram_lines(chart, x, bar_top)]
    legend, height = _legend(chart, bar_top, lang)
    body += legend
    label = escape(f"{chart.title}: {chart.total_label} {_fmt(chart.total_gib, lang)} GiB")
    return (
        f'<svg class="memory-chart" role="img" aria-label="{label}" '
        f'viewBox="0 0 {WIDTH} {height}" width="100%" style="display:block;max-width:680px" '
        'xmlns="http://www.w3.org/2000/svg">' + "".join(body) + "</svg>"
    )


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _title(chart: MemoryChart, lang: str) -> str:
    need = f"{escape(chart.total_label)}: {_fmt(chart.total_gib, lang)} GiB"
    return (
        f'<text x="{LEFT}" y="20" style="{_FONT};font-size:15px;font-weight:600" '
        f'fill="currentColor">{escape(_clip(chart.title, TITLE_CHARS))}</text>'
        f'<text x="{LEFT}" y="40" style="{_FONT};font-size:14px" fill="currentColor">{need}</text>'
    )


def _bar(chart: MemoryChart, x: Scale, bar_top: int, lang: str) -> list[str]:
    out, start = [], 0.0
    for part in chart.parts:
        if part.gib <= 0:
            continue
        x0, x1 = x(start), x(start + part.gib)
        out.append(
            f'<rect x="{x0:.1f}" y="{bar_top}" width="{max(x1 - x0, 0.5):.1f}" '
            f'height="{BAR_HEIGHT}" fill="{COLORS[part.key]}">'
            f"<title>{escape(part.label)}: {_fmt(part.gib, lang)} GiB</title></rect>"
        )
        start += part.gib
    return out


def _axis(axis_max: float, step: float, x: Scale, bar_top: int, lang: str) -> list[str]:
    y = bar_top + BAR_HEIGHT + 14
    out = [
        f'<line x1="{LEFT}" x2="{x(axis_max):.1f}" y1="{y - 10}" y2="{y - 10}" '
        'stroke="currentColor" stroke-opacity="0.3"/>'
    ]
    ticks = round(axis_max / step)
    for i in range(ticks + 1):
        value = i * step
        out.append(
            f'<text x="{x(value):.1f}" y="{y + 4}" text-anchor="middle" '
            f'style="{_FONT};font-size:11px" fill="currentColor" fill-opacity="0.7">'
            f"{cells.number(value, lang, 0 if value == round(value) else 1)}</text>"
        )
    out.append(
        f'<text x="{x(axis_max):.1f}" y="{y + 18}" text-anchor="end" style="{_FONT};'
        'font-size:11px" fill="currentColor" fill-opacity="0.7">GiB</text>'
    )
    return out


def _vram_lines(chart: MemoryChart, x: Scale, bar_top: int) -> list[str]:
    """One dashed line per capacity, each labelled on its own row above the bar (largest on
    top), the label on the side of the line with more room."""
    out = []
    ordered = sorted(chart.lines, key=lambda item: -item.gib)
    for row, line in enumerate(ordered):
        color = FITS if chart.total_gib <= line.gib else DOES_NOT_FIT
        pos = x(line.gib)
        label_y = HEADER + LABEL_ROW * (row + 1) - 3
        anchor, shift = ("end", -4) if pos > WIDTH / 2 else ("start", 4)
        out.append(
            f'<line x1="{pos:.1f}" x2="{pos:.1f}" y1="{label_y - 10}" '
            f'y2="{bar_top + BAR_HEIGHT + 4}" stroke="{color}" stroke-width="2" '
            f'stroke-dasharray="5 3"><title>{escape(line.label)}</title></line>'
            f'<text x="{pos + shift:.1f}" y="{label_y}" text-anchor="{anchor}" '
            f'style="{_FONT};font-size:12px;font-weight:600" fill="{color}">'
            f"{escape(line.label)}</text>"
        )
    return out


def _legend(chart: MemoryChart, bar_top: int, lang: str) -> tuple[list[str], int]:
    out, y0 = [], bar_top + BAR_HEIGHT + 44
    per_row = 2
    for i, part in enumerate(chart.parts):
        col, row = i % per_row, i // per_row
        lx, ly = LEFT + col * 270, y0 + row * 21
        out.append(
            f'<rect x="{lx}" y="{ly - 10}" width="12" height="12" fill="{COLORS[part.key]}"/>'
            f'<text x="{lx + 17}" y="{ly}" style="{_FONT};font-size:12.5px" fill="currentColor">'
            f"{escape(part.label)} {_fmt(part.gib, lang)} GiB</text>"
        )
    rows = math.ceil(len(chart.parts) / per_row)
    return out, y0 + (rows - 1) * 21 + 8
