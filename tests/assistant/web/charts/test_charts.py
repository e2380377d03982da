"""The estimator tab's memory chart SVG: parts as bars, capacities as coloured lines, figures
in the interface language, text escaped."""

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
    memory_chart,
    render_memory_chart,
    vram_lines,
)
from tests.fakes.artifacts import make_estimate

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
    return MemoryChart(
        title=title, parts=parts, total_gib=total, lines=lines or [], total_label="Needed per GPU"
    )


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
    assert root.get("aria-label") == "<script>alert(1)</script> & co: Needed per GPU 30 GiB"


def test_axis_ticks_cover_the_largest_value() -> None:
    svg = render_memory_chart(chart(total=30.0, lines=[VramLine(label="B 141 GiB", gib=141)]))
    ticks = [float(t) for t in re.findall(r'fill-opacity="0.7">([\d.]+)</text>', svg)]
    assert ticks == [0, 50, 100, 150], "step 50 up to 150 >= 141 x 1.05"


def test_figures_are_written_in_the_interface_language() -> None:
    svg = render_memory_chart(chart(total=21.5), "de")
    assert "Needed per GPU: 21,5 GiB" in svg and "Weights 11,5 GiB" in svg
    assert ">21.5 GiB" not in svg, "no dot decimals in German"


def test_vram_lines_are_the_compared_gpus_largest_first_each_once() -> None:
    lines = vram_lines(["RTX 4090", "no such gpu", "H100", "H100-SXM"], "fr")
    assert [(line.label, line.gib) for line in lines] == [
        ("H100-SXM 80\u00a0GiB", 80.0),
        ("RTX4090 24\u00a0GiB", 24.0),
    ], "aliases resolve, unknown names are skipped, repeats drawn once"
    assert vram_lines(["A100 40GB"], "de")[0].label == "A100-40GB-SXM 40\u00a0GiB"


def test_memory_chart_copies_the_estimate_in_gib_in_the_interface_language() -> None:
    data = memory_chart(make_estimate(total_gpus=4), [], "es")
    assert [(p.key, p.gib) for p in data.parts] == [
        ("weights", 15.0),
        ("gradients", 0.08),
        ("optimizer", 0.5),
        ("activations", 4.25),
        ("overhead", 1.9),
    ]
    assert data.total_gib == 21.73, "sum of the parts, 2 decimals"
    assert data.title == "Llama 3.1 8B · Memoria por GPU · en cada una de las 4 GPU"


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
