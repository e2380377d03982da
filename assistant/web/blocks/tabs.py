"""The Catalog, Knowledge and Estimator tabs. Each returns, where the page must fill it on
load, the (handler, inputs, outputs) that do so in the page's language."""

from __future__ import annotations

from datetime import date
from typing import Any

import gradio as gr

from assistant.web.blocks.common import Widths, frame, language_choices, shown_error, t
from assistant.web.blocks.handlers import App
from assistant.web.session import WebSession
from assistant.web.ui_strings import ui_text
from assistant.web.views import (
    CatalogFilters,
    estimator_view,
    filter_catalog_table,
    passages_markdown,
)
from tools.advice import estimate_job
from tools.architectures.registry import list_models
from tools.enums import Checkpointing, Method, Precision, choices
from tools.errors import AdvisorError
from tools.gpus import list_gpus
from tools.job import JobSpec

__all__ = ["catalog_tab", "estimator_tab", "knowledge_tab"]

CATALOG_WIDTHS: Widths = [100, 210, 130, 90, 96, 76, 76, 150, 340, 100, 100]
COMPARE_GPUS = ["H100-SXM", "A100-80GB-SXM", "L40S", "RTX4090"]
_ESTIMATOR_FIELDS = ("model", "method", "precision", "seq_len", "micro_batch_size", "num_gpus",
                     "gradient_checkpointing", "lora_rank", "zero_stage")  # fmt: skip


def catalog_tab(app: App, web_state: gr.State) -> list[Any]:
    """The catalog with its filters."""
    catalog = app.catalog()
    with gr.Tab(t("tab_catalog"), id="catalog-tab"):
        with gr.Row():
            gpu = gr.Dropdown(sorted({i.gpu for i in catalog}), multiselect=True, label=t("gpu"),
                              elem_id="cat-gpu")  # fmt: skip
            vram = gr.Number(label=t("min_vram"), minimum=0, elem_id="cat-vram")
            provider = gr.Dropdown(catalog.providers(), multiselect=True, label=t("provider"),
                                   elem_id="cat-provider")  # fmt: skip
            region = gr.Dropdown(sorted({r for i in catalog for r in i.regions}), multiselect=True,
                                 label=t("region"), elem_id="cat-region")  # fmt: skip
            price = gr.Number(label=t("max_price"), minimum=0, elem_id="cat-price")
            spot = gr.Checkbox(label=t("spot_only"), elem_id="cat-spot")
        count = gr.Markdown(elem_id="cat-count")
        table = gr.Dataframe(interactive=False, wrap=False, max_height=640, elem_id="catalog",
                             show_search="search", column_widths=CATALOG_WIDTHS)  # fmt: skip
        gr.Markdown(t("catalog_note"))

    def show(web: WebSession | None, *values: Any) -> tuple[Any, ...]:
        lang = web.language if web else "en"
        names = ("gpus", "min_vram_gib", "providers", "regions", "max_price", "spot_only")
        filters = CatalogFilters(**dict(zip(names, values, strict=True)))
        stale = app.settings.stale_price_days
        count_text, shown = filter_catalog_table(catalog, filters, date.today(), stale, lang)
        return count_text, frame(shown)

    inputs = [web_state, gpu, vram, provider, region, price, spot]
    gr.on([gpu.change, provider.change, region.change, spot.change, vram.submit, price.submit],
          show, inputs, [count, table], api_visibility="private")  # fmt: skip
    return [show, inputs, [count, table]]


def knowledge_tab(app: App) -> None:
    """A search box over the knowledge base."""
    with gr.Tab(t("tab_knowledge"), id="knowledge-tab"):
        with gr.Row(equal_height=True):
            query = gr.Textbox(label=t("question"), placeholder=t("kb_placeholder"), scale=4,
                               elem_id="kb-query")  # fmt: skip
            lang = gr.Dropdown(language_choices(), value="auto", label=t("show_in_language"),
                               elem_id="kb-lang")  # fmt: skip
            search = gr.Button(t("search"), variant="primary", elem_id="kb-search")
        results = gr.Markdown(elem_id="kb-results")

    def find(text: str, language: str) -> str:
        if not (text or "").strip():
            return ""
        wanted = None if language == "auto" else language
        try:
            passages = app.assistant.resources.knowledge().search(text, lang=wanted, k=5)
        except AdvisorError as exc:
            raise gr.Error(str(exc)) from None
        return passages_markdown(passages)

    gr.on([query.submit, search.click, lang.input], find, [query, lang], [results],
          api_visibility="private")  # fmt: skip


def estimator_tab(app: App, web_state: gr.State) -> list[Any]:
    """One estimate of a job: blank fields take the job's stated defaults, listed first."""
    models = [(arch.name, arch.id) for arch in list_models()]
    with gr.Tab(t("tab_estimator"), id="estimator-tab"), gr.Row():
        with gr.Column(scale=2):
            model = gr.Dropdown(models, value="meta-llama/Llama-3.1-8B", allow_custom_value=True,
                                label=t("model"), info=t("model_info"))  # fmt: skip
            with gr.Row():
                method = gr.Dropdown(list(choices(Method)), value=None, label=t("method"))
                precision = gr.Dropdown(list(choices(Precision)), value=None,
                                        label=t("precision"))  # fmt: skip
            with gr.Row():
                seq_len = gr.Number(None, label=t("seq_len"), precision=0, minimum=0)
                micro = gr.Number(None, label=t("micro_batch"), precision=0, minimum=0)
                gpus = gr.Number(None, label=t("num_gpus"), precision=0, minimum=0)
            with gr.Row():
                ckpt = gr.Dropdown(list(choices(Checkpointing)), value=None,
                                   label=t("gradient_checkpointing"))  # fmt: skip
                rank = gr.Number(None, label=t("lora_rank"), precision=0, minimum=0)
                zero = gr.Dropdown([0, 1, 2, 3], value=None, label=t("zero_stage"))
            compare = gr.Dropdown([g.id for g in list_gpus()], value=COMPARE_GPUS,
                                  multiselect=True, label=t("compare_gpus"))  # fmt: skip
            run = gr.Button(t("estimate"), variant="primary", elem_id="est-run")
        with gr.Column(scale=3):
            chart = gr.HTML(elem_id="est-chart")
            parts = gr.Dataframe(interactive=False, elem_id="est-parts")
            with gr.Accordion(t("assumptions"), open=False):
                assumptions = gr.Markdown(elem_id="est-assumptions")

    def run_estimate(web: WebSession | None, *values: Any) -> tuple[Any, ...]:
        *fields, gpu_names = values
        given = {
            k: v for k, v in zip(_ESTIMATOR_FIELDS, fields, strict=True) if v not in (None, "", 0)
        }
        if given.get("method") in ("full", "pretrain"):
            given.pop("lora_rank", None)  # the rank widget keeps a value; it means nothing here
        lang = web.language if web else "en"
        try:
            resolved, result = estimate_job(JobSpec.parse(given))
        except AdvisorError as exc:
            raise shown_error(ui_text(lang, "error_prefix"), exc) from None
        view = estimator_view(result, resolved.shown_assumptions("estimate"), gpu_names or [], lang)
        return view.chart_svg, frame(view.parts), view.assumptions_markdown

    inputs = [web_state, model, method, precision, seq_len, micro, gpus, ckpt, rank, zero, compare]
    gr.on([run.click, method.input, precision.input, ckpt.input, zero.input, compare.input],
          run_estimate, inputs, [chart, parts, assumptions], api_visibility="private")  # fmt: skip
    return [run_estimate, inputs, [chart, parts, assumptions]]
