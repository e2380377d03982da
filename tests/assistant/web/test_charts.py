"""The memory chart SVG: parts as bars, capacities as coloured lines, text escaped."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from hypothesis import given
from hypothesis import strategies as st

from assistant.web.charts import (
    COLORS,
    DOES_NOT_FIT,
    FITS,
    TITLE_CHARS,
    ChartPart,
    MemoryChart,
    VramLine,
    _nice_step,
    render_memory_chart,
)

SVG = "{http://www.w3.org/2000/svg}"


def chart(
    total: float = 30.0, lines: list[VramLine] | None = None, title: str = "M"
) -> MemoryChart:
    parts = [
        ChartPart(key="weights", label="Weights", gib=total - 10),
        ChartPart(key="gradients", label="Gradients", gib=0.0),
        ChartPart(key="optimizer", label="Optimizer", gib=4.0),
        ChartPart(key="activations", label="Activations", gib=5.0),
        ChartPart(key="overhead", label="Overhead", gib=1.0),
    ]
    return MemoryChart(title=title, parts=parts, total_gib=total, lines=lines or [],
                       total_label="Needed per GPU")  # fmt: skip


def test_bar_segments_are_the_nonzero_parts_in_order_with_widths_in_proportion() -> None:
    root = ET.fromstring(render_memory_chart(chart(lines=[VramLine(label="A 40 GiB", gib=40)])))
    bars = [r for r in root.iter(f"{SVG}rect") if r.find(f"{SVG}title") is not None]
    assert [r.get("fill") for r in bars] == [
        COLORS["weights"],
        COLORS["optimizer"],
        COLORS["activations"],
        COLORS["overhead"],
    ], "the zero gradients part draws nothing"
    widths = [float(r.get("width") or 0) for r in bars]
    assert abs(widths[0] / widths[1] - 20 / 4) < 0.01, "20 GiB vs 4 GiB"


def test_capacity_lines_are_green_when_the_estimate_fits_and_red_when_not() -> None:
    lines = [VramLine(label="A10 24 GiB", gib=24), VramLine(label="H100 80 GiB", gib=80)]
    svg = render_memory_chart(chart(total=30.0, lines=lines))
    root = ET.fromstring(svg)
    colors = {
        line.find(f"{SVG}title").text: line.get("stroke")  # type: ignore[union-attr]
        for line in root.iter(f"{SVG}line")
        if line.find(f"{SVG}title") is not None
    }
    assert colors == {"A10 24 GiB": DOES_NOT_FIT, "H100 80 GiB": FITS}


def test_text_is_escaped_and_the_svg_labels_itself() -> None:
    svg = render_memory_chart(chart(title="<script>alert(1)</script> & co"))
    assert "<script>" not in svg and "&lt;script&gt;" in svg, "the title is escaped"
    root = ET.fromstring(svg)
    assert root.get("role") == "img" and root.get("class") == "memory-chart"
    assert root.get("aria-label") == "<script>alert(1)</script> & co: Needed per GPU 30.0 GiB"


def test_axis_ticks_cover_the_largest_value() -> None:
    svg = render_memory_chart(chart(total=30.0, lines=[VramLine(label="B 141 GiB", gib=141)]))
    ticks = [float(t) for t in re.findall(r'fill-opacity="0.7">([\d.]+)</text>', svg)]
    assert ticks == [0, 50, 100, 150], "step 50 up to 150 >= 141 x 1.05"


@given(st.floats(min_value=0.01, max_value=1e6))
def test_nice_step_gives_between_two_and_five_ticks(span: float) -> None:
    step = _nice_step(span)
    mantissa = step / 10 ** int(f"{step:e}".split("e")[1])
    assert round(mantissa, 6) in (1, 2, 5), "1, 2 or 5 times a power of ten"
    assert 2 <= span / step <= 5.0 + 1e-9, "about five ticks"


def test_a_long_title_is_cut_but_kept_whole_in_the_label() -> None:
    title = "Llama-style decoder, ~70B parameters (estimated) · GPU başına bellek"
    root = ET.fromstring(render_memory_chart(chart(title=title)))
    first_text = next(root.iter(f"{SVG}text")).text or ""
    assert first_text.endswith("…") and len(first_text) <= TITLE_CHARS
    assert title.startswith(first_text[:-1]), "the start of the title, cut at the limit"
    assert (root.get("aria-label") or "").startswith(title)
