"""The page's header: the name, one line of what it does, how old the prices are with a button
that refreshes them, and the interface and answer languages side by side.

The price line is filled when the page loads (in the page's language) and again after every
refresh; the button runs the Catalog tab's refresh (`assistant.web.blocks.catalog`), whose
progress and outcome that tab shows, and opens it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import gradio as gr

from assistant.web.blocks.common import answer_choices, guarded, interface_choices, t
from assistant.web.blocks.handlers import App
from assistant.web.prices import price_age_markdown
from assistant.web.state.session import WebSession

__all__ = ["Header", "header"]


@dataclass
class Header:
    """The header's inputs and outputs."""

    ui_lang: Any
    answer: Any
    prices: Any  # the price-age line
    refresh: Any  # its button

    def fill(self, app: App, web_state: Any) -> list[Any]:
        """[fn, inputs, outputs] that write the price-age line for a session's language."""

        @guarded(1, lambda web, *_: web.language if web else "en")
        def prices_line(web: WebSession | None) -> str:
            lang = web.language if web else "en"
            now = datetime.now(UTC)
            return price_age_markdown(app.catalog(), now, app.settings.stale_price_days, lang)

        return [prices_line, [web_state], [self.prices]]


def header() -> Header:
    """Name and tagline; the price line and its button; the two language choices."""
    with gr.Row(elem_id="header", equal_height=False):
        with gr.Column(scale=3, min_width=240):
            gr.Markdown("# GPU Advisor", elem_id="title")
            gr.Markdown(t("tagline"), elem_id="tagline")
            with gr.Row(elem_id="price-age-row", equal_height=False):
                prices = gr.Markdown(elem_id="price-age")
                refresh = gr.Button(
                    t("refresh_prices"), elem_id="header-refresh", size="sm", scale=0,
                    min_width=150, variant="secondary",
                )  # fmt: skip
        with gr.Column(scale=2, min_width=240), gr.Row(elem_id="languages"):
            ui_lang = gr.Dropdown(
                interface_choices(),
                value=None,
                label=t("ui_language"),
                elem_id="ui-lang",
                min_width=140,
            )
            answer = gr.Dropdown(
                answer_choices(),
                value="auto",
                label=t("answer_language"),
                elem_id="language",
                min_width=140,
            )
    return Header(ui_lang=ui_lang, answer=answer, prices=prices, refresh=refresh)
