"""The Catalog tab: every instance type with its filters, a search that the count follows, the key
columns first ($/h and $/GPU-hour on demand and spot, price age, source link) and the rest behind
an expander. Returns the (handler, inputs, outputs) that fill it in the page's language."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import gradio as gr

from assistant.web.blocks.common import Widths, guarded, t, table_update
from assistant.web.blocks.handlers import App
from assistant.web.state.session import WebSession
from assistant.web.ui_strings import ui_format
from assistant.web.views import CatalogFilters, catalog_view

__all__ = ["catalog_tab"]

KEY_WIDTHS: Widths = [270, 150, 90, 100, 110, 100, 120, 110, 220]
MORE_WIDTHS: Widths = [270, 110, 120, 110, 300, 130, 130, 140]
_FILTERS = ("gpus", "min_vram_gib", "providers", "regions", "max_price", "spot_only", "text")


def _lang(web: WebSession | None, *_rest: Any) -> str:
    return web.language if isinstance(web, WebSession) else "en"


def catalog_tab(app: App, web_state: gr.State) -> list[Any]:
    """The catalog with its filters; returns [fill, inputs, outputs]."""
    catalog = app.catalog()
    with gr.Column():
        with gr.Row(elem_classes=["filters"]):
            gpu = gr.Dropdown(
                sorted({i.gpu for i in catalog}),
                multiselect=True,
                label=t("gpu"),
                elem_id="cat-gpu",
                min_width=160,
            )
            vram = gr.Number(label=t("min_vram"), minimum=0, elem_id="cat-vram", min_width=140)
            provider = gr.Dropdown(
                catalog.providers(),
                multiselect=True,
                label=t("provider"),
                elem_id="cat-provider",
                min_width=160,
            )
            region = gr.Dropdown(
                sorted({r for i in catalog for r in i.regions}),
                multiselect=True,
                label=t("region"),
                elem_id="cat-region",
                min_width=160,
            )
            price = gr.Number(label=t("max_price"), minimum=0, elem_id="cat-price", min_width=140)
            spot = gr.Checkbox(label=t("spot_only"), elem_id="cat-spot", min_width=120)
        search = gr.Textbox(
            label=t("search"), placeholder=t("catalog_search"), elem_id="cat-search", max_lines=1
        )
        count = gr.Markdown(elem_id="cat-count")
        table = gr.Dataframe(
            interactive=False,
            wrap=True,
            max_height=620,
            elem_id="catalog",
            column_widths=KEY_WIDTHS,
        )
        with gr.Accordion(t("more_columns"), open=False, elem_id="catalog-more-box"):
            more = gr.Dataframe(
                interactive=False,
                wrap=True,
                max_height=620,
                elem_id="catalog-more",
                column_widths=MORE_WIDTHS,
            )
        note = gr.Markdown(elem_id="catalog-note")

    @guarded(4, _lang)
    def show(web: WebSession | None, *values: Any) -> tuple[Any, ...]:
        lang = web.language if web else "en"
        raw = dict(zip(_FILTERS, values, strict=True))
        filters = CatalogFilters(**{k: v for k, v in raw.items() if v is not None})
        stale = app.settings.stale_price_days
        view = catalog_view(catalog, filters, datetime.now(UTC), stale, lang)
        return (
            view.count_markdown,
            table_update(view.key),
            table_update(view.more),
            ui_format(lang, "catalog_note", days=stale),
        )

    inputs = [web_state, gpu, vram, provider, region, price, spot, search]
    outputs = [count, table, more, note]
    gr.on(
        [
            gpu.change,
            provider.change,
            region.change,
            spot.change,
            vram.submit,
            price.submit,
            search.change,
        ],
        show,
        inputs,
        outputs,
        api_visibility="private",
        trigger_mode="always_last",
    )
    return [show, inputs, outputs]
