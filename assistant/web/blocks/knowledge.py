"""The Knowledge tab: a search over the knowledge base, shown in a chosen language."""

from __future__ import annotations

from typing import Any

import gradio as gr

from assistant.web.blocks.common import answer_choices, guarded, inform, t
from assistant.web.blocks.handlers import App
from assistant.web.state.session import WebSession
from assistant.web.ui_strings import ui_text
from assistant.web.views import passages_markdown

__all__ = ["knowledge_tab"]


def _lang(_text: str, _language: str, web: WebSession | None) -> str:
    return web.language if isinstance(web, WebSession) else "en"


def knowledge_tab(app: App, web_state: gr.State) -> None:
    """A search box over the knowledge base."""
    with gr.Column():
        with gr.Row(equal_height=True):
            query = gr.Textbox(
                label=t("question"),
                placeholder=t("kb_placeholder"),
                scale=4,
                elem_id="kb-query",
                min_width=240,
            )
            lang = gr.Dropdown(
                answer_choices(),
                value="auto",
                label=t("show_in_language"),
                elem_id="kb-lang",
                min_width=160,
            )
            search = gr.Button(t("search"), variant="primary", elem_id="kb-search", min_width=100)
        results = gr.Markdown(elem_id="kb-results")

    @guarded(1, _lang)
    def find(text: str, language: str, web: WebSession | None) -> Any:
        if not (text or "").strip():
            ui = _lang(text, language, web)
            inform(ui, ui_text(ui, "empty_query"))
            return gr.skip()
        wanted = None if language == "auto" else language
        passages = app.assistant.resources.knowledge().search(text, lang=wanted, k=5)
        return passages_markdown(passages)

    def again(text: str, language: str, web: WebSession | None) -> Any:
        """Another language for the results shown (nothing to do without a question)."""
        return find(text, language, web) if (text or "").strip() else gr.skip()

    gr.on(
        [query.submit, search.click],
        find,
        [query, lang, web_state],
        [results],
        api_visibility="private",
    )
    lang.input(again, [query, lang, web_state], [results], api_visibility="private")
