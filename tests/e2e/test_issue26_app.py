"""Issue 26, "The app and the catalog as people use them": the defects seen in the browser,
checked in Chromium on a desktop (1440x900) and a phone (390x844). Screenshots go to
test-artifacts/issue26-<defect>-<size>-<language>.png."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.pages import LOCALES, SIZES, ask, page_width, shot

JOB = {
    "en": ("QLoRA on Llama 3.1 70B, 200M tokens, which GPU should I rent?", "spot is fine"),
    "tr": ("Llama 3.1 70B QLoRA, 200 milyon token, hangi GPU'yu kiralamalıyım?", "spot olur"),
}
# What the cost chart drew at its edges: the on-screen box of its canvas, and how many pixels
# of its outermost 3 columns on each side differ from its background (text cut at an edge
# shows there; the chart's own padding leaves them blank).
CHART_EDGES = """() => {
  const canvas = document.querySelector('#cost-chart canvas');
  const box = canvas.getBoundingClientRect();
  const context = canvas.getContext('2d');
  const ground = context.getImageData(0, 0, 1, 1).data;  // the background, at a corner
  const painted = (x) => {
    const data = context.getImageData(x, 0, 3, canvas.height).data;
    let count = 0;
    for (let i = 0; i < data.length; i += 4) {
      const off = [0, 1, 2, 3].some((c) => Math.abs(data[i + c] - ground[c]) > 24);
      if (off) count += 1;
    }
    return count;
  };
  return {left: box.left, right: box.right, painted: painted(0) + painted(canvas.width - 3)};
}"""


@pytest.mark.parametrize("lang", list(JOB))
@pytest.mark.parametrize("size", list(SIZES))
def test_4_the_cost_chart_stays_inside_the_screen_after_a_spot_turn(
    open_page: Any, size: str, lang: str
) -> None:
    page = open_page(size, LOCALES[lang])
    question, spot = JOB[lang]
    ask(page, question)
    ask(page, spot)
    page.wait_for_timeout(800)
    page.locator("#cost-chart").scroll_into_view_if_needed()
    width = SIZES[size][0]
    edges = page.evaluate(CHART_EDGES)
    assert page_width(page) <= width, "no sideways scroll of the page"
    assert edges["left"] >= 0 and edges["right"] <= width, f"the chart is on screen: {edges}"
    assert edges["painted"] == 0, "nothing the chart draws is cut at its edges (legend, labels)"
    shot(page, f"issue26-4-cost-chart-{size}-{lang}")
