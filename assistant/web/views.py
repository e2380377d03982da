"""The Catalog, Knowledge and Estimator tabs as pure views: filters to tables, passages to
Markdown, an estimate to its chart, parts and assumptions. No UI library is imported here."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from pydantic import BaseModel, Field

from assistant.answers.job import field_value
from assistant.answers.parts import Text
from assistant.web import cells
from assistant.web.charts import memory_chart, render_memory_chart, vram_lines
from assistant.web.tables import Table, breakdown_table, catalog_tables
from assistant.web.ui_strings import ui_format, ui_text
from knowledge.retrieval import Passage
from tools.advice import Assumed
from tools.catalog.instances import Catalog, Instance
from tools.memory import MemoryEstimate

__all__ = [
    "CatalogFilters",
    "CatalogView",
    "EstimatorView",
    "catalog_view",
    "estimator_view",
    "passages_markdown",
]


class CatalogFilters(BaseModel):
    """The catalog tab's filters; empty lists, blank text and None mean 'any'."""

    gpus: list[str] = Field(default_factory=list, description="GPU names, any of them")
    min_vram_gib: float | None = Field(None, description="least memory per GPU, GiB")
    providers: list[str] = Field(default_factory=list)
    regions: list[str] = Field(default_factory=list)
    max_price: float | None = Field(None, description="most USD per instance-hour")
    spot_only: bool = False
    text: str = Field("", description="words every shown row contains (id, GPU, provider, region)")


class CatalogView(BaseModel):
    """What the catalog tab shows: the count line and the tables of the matching rows."""

    count_markdown: str
    key: Table
    more: Table


def _matches(item: Instance, words: Sequence[str]) -> bool:
    haystack = " ".join([item.id, item.gpu, item.provider, *item.regions]).lower()
    return all(word in haystack for word in words)


def catalog_view(
    catalog: Catalog, filters: CatalogFilters, now: datetime, stale_days: int, lang: str
) -> CatalogView:
    """The rows matching every filter, and '**12** of 140 instance types' counting them."""
    found = catalog.filter(
        gpu=filters.gpus or None,
        min_vram_gib=filters.min_vram_gib or None,
        providers=filters.providers or None,
        regions=filters.regions or None,
        max_price=filters.max_price or None,
        spot_only=filters.spot_only,
    )
    words = filters.text.lower().split()
    shown = [item for item in found if _matches(item, words)]
    key, more = catalog_tables(shown, now, stale_days, lang)
    count = ui_format(
        lang,
        "catalog_count",
        shown=f"**{cells.count(len(shown), lang)}**",
        total=cells.count(len(catalog), lang),
    )
    return CatalogView(count_markdown=count, key=key, more=more)


def passages_markdown(passages: Sequence[Passage]) -> str:
    """Search results as Markdown: title, topic and language, then the passage and its source."""
    blocks = []
    for passage in passages:
        topic = f"`{passage.topic}` · " if passage.topic else ""
        note = " ↩" if passage.lang_fallback else ""
        blocks.append(
            f"### {passage.title}\n{topic}**{passage.lang}**{note}\n\n{passage.text}\n\n"
            f"<sub>{passage.source}</sub>"
        )
    return "\n\n---\n\n".join(blocks)


class EstimatorView(BaseModel):
    chart_svg: str
    parts: Table
    assumptions_markdown: str


def estimator_view(
    result: MemoryEstimate, assumed: Sequence[Assumed], compare_gpus: Sequence[str], lang: str
) -> EstimatorView:
    """The estimator tab for one estimate: chart against `compare_gpus`, parts, the defaults
    assumed for what was left open, then the estimator's assumptions."""
    chart = memory_chart(result, vram_lines(compare_gpus, lang), lang)
    t = Text(lang)
    defaults = [
        "- "
        + t.msg(
            "defaults.item",
            field=t.label("field", item.field),
            value=field_value(t, item.field, item.value),
        )
        for item in assumed
    ]
    lines = [
        f"**{ui_text(lang, 'assumed_defaults')}**",
        *defaults,
        "",
        f"**{ui_text(lang, 'assumptions_english')}**",
        *(f"- {line}" for line in result.assumptions),
    ]
    return EstimatorView(
        chart_svg=render_memory_chart(chart, lang),
        parts=breakdown_table(result, lang),
        assumptions_markdown="\n".join(lines),
    )
