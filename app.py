"""GPU Advisor's web app: chat with a job panel, catalog, knowledge base and memory estimator.

    python app.py [--host 127.0.0.1] [--port 7860] [--mcp]

`build_demo(settings)` builds the Gradio Blocks; `main()` launches them. Everything the app shows
is computed by pure modules in `assistant/` (panel, views, charts, launch specs, feedback); this
file only wires components to them. Basic auth comes from GPU_ADVISOR_AUTH_USER and
GPU_ADVISOR_AUTH_PASSWORD. No telemetry: Gradio analytics are off and nothing is fetched.
"""

from __future__ import annotations

import argparse
import logging
import os
import tempfile
import threading
import time
from collections.abc import Sequence
from datetime import date
from functools import cache
from pathlib import Path
from typing import Any

import gradio as gr
import pandas as pd

from assistant.agent.conversation import MAX_MESSAGE_CHARS, Assistant
from assistant.agent.events import ToolEnd, ToolStart, events_to_chat_messages
from assistant.settings import Settings
from assistant.web.feedback import append_feedback, feedback_path, record_for_like
from assistant.web.form import (
    FORM_FIELDS,
    assumed_defaults,
    form_from_state,
    form_from_values,
    form_values,
    state_from_form,
)
from assistant.web.panel import compute_panel, panel_from_events, panel_view
from assistant.web.public_api import PublicApi
from assistant.web.session import WebSession, browser_secret
from assistant.web.ui_strings import (
    example_prompts,
    i18n_tables,
    language_from_header,
    ui_text,
)
from assistant.web.uploads import model_from_upload
from assistant.web.views import (
    CatalogFilters,
    Table,
    estimator_view,
    filter_catalog_table,
    passages_markdown,
)
from tools.architectures.registry import list_models
from tools.catalog.instances import Catalog, Instance
from tools.errors import AdvisorError
from tools.gpus import list_gpus
from tools.languages import LANGUAGE_NAMES, LANGUAGES
from tools.memory import EstimateInput

CONCURRENCY = 4  # turns run at once; CPU-bound, so more only adds contention
QUEUE_SIZE = 256
STREAM_INTERVAL_S = 0.1  # answer chunks closer together than this go out in one update
UPLOAD_LIMIT = "5mb"  # Gradio's hard cap; assistant.web.uploads refuses anything over 1 MB clearly
OFFLINE_ENV = {
    "GRADIO_ANALYTICS_ENABLED": "False",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "ORT_DISABLE_TELEMETRY": "1",
    "ANONYMIZED_TELEMETRY": "False",
    "HF_HUB_DISABLE_TELEMETRY": "1",
}
STORAGE_KEY = "gpu-advisor-conversation"
COMPARE_GPUS = ["H100-SXM", "A100-80GB-SXM", "L40S", "RTX4090"]
CSS = """
.gradio-container {max-width: 1500px !important; margin: auto}
#chat {min-height: 560px}
.memory-chart text {user-select: none}
footer {display: none !important}
"""
Widths = list[str | int]
RANKED_WIDTHS: Widths = [44, 100, 190, 120, 84, 96, 70, 80, 80, 90, 80, 220]
EXCLUDED_WIDTHS: Widths = [100, 190, 120, 100, 420]
CATALOG_WIDTHS: Widths = [100, 210, 130, 90, 96, 76, 76, 150, 340, 100, 100]
METHODS = ["qlora", "lora", "full", "pretrain"]
PRECISIONS = ["bf16-mixed", "fp16-mixed", "bf16", "fp32"]
SPOT = ["never", "allowed", "required"]


@cache
def i18n() -> gr.I18n:
    return gr.I18n(**i18n_tables())


def _t(key: str) -> Any:
    return i18n()(key)


def _frame(table: Table) -> pd.DataFrame:
    return pd.DataFrame(table.rows, columns=table.headers)


def _lang_choices() -> list[tuple[str, str]]:
    return [("Auto", "auto")] + [(LANGUAGE_NAMES[code], code) for code in LANGUAGES]


class App:
    """What the handlers share: the assistant (tools, catalog, knowledge base) and settings."""

    def __init__(self, settings: Settings, assistant: Assistant) -> None:
        self.settings = settings
        self.assistant = assistant
        # Launch-spec downloads: outside data_dir (which is never served), removed at exit.
        self._exports = tempfile.TemporaryDirectory(prefix="gpu-advisor-exports-")
        self.export_dir = Path(self._exports.name)
        # Read once here: the knowledge base may still be loading when the first page opens.
        self._catalog = assistant.resources.catalog()
        self._instances = {item.id: item for item in self._catalog}

    def catalog(self) -> Catalog:
        return self._catalog

    def instances(self) -> dict[str, Instance]:
        return self._instances

    # -- panel ---------------------------------------------------------------------------

    def panel_outputs(self, web: WebSession) -> tuple[Any, ...]:
        view = panel_view(web.panel, self.instances(), web.language, web.chosen)
        web.chosen = view.chosen
        download = gr.DownloadButton(visible=False)
        if view.launch_json is not None and view.chosen is not None:
            folder = self.export_dir / web.session.id
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"launch-{view.chosen.replace('/', '-')}.json"
            path.write_text(view.launch_json, encoding="utf-8")
            download = gr.DownloadButton(value=str(path), visible=True)
        excluded = view.excluded
        label = f"{ui_text(web.language, 'excluded')} ({len(excluded.rows)})"
        return (
            view.notes_markdown,
            view.chart_svg,
            _frame(view.ranked),
            gr.Accordion(label=label),
            _frame(excluded),
            gr.Dropdown(choices=view.launch_choices, value=view.chosen),
            view.launch_yaml,
            download,
        )

    def form_outputs(self, web: WebSession) -> tuple[Any, ...]:
        state = web.session.state
        return form_values(form_from_state(state, assumed_defaults(state, self._catalog)))

    # -- chat ----------------------------------------------------------------------------

    def respond(self, message: str, language: str, web: WebSession | None) -> Any:
        """Stream one turn: the chat so far plus this turn's tool calls, answer and citations."""
        web = web if web is not None else WebSession()
        text = (message or "").strip()
        if not text:
            yield web.chat, web
            return
        shown = [*web.chat, {"role": "user", "content": text}]
        override = None if language in (None, "", "auto") else language
        events: list[Any] = []
        last = time.monotonic()
        for event in self.assistant.respond(text, web.session, lang=override):
            events.append(event)
            now = time.monotonic()
            if isinstance(event, ToolStart | ToolEnd) or now - last >= STREAM_INTERVAL_S:
                last = now  # answer chunks arriving together are sent together
                yield [*shown, *events_to_chat_messages(events)], gr.skip()
        web.chat = [*shown, *events_to_chat_messages(events)]
        web.panel = panel_from_events(events, web.panel)
        yield web.chat, web

    def feedback(self, web: WebSession | None, like: gr.LikeData) -> None:
        index = like.index if isinstance(like.index, int) else like.index[0]
        if web is None:
            return
        record = record_for_like(
            web.chat, index, like.liked, session=web.session.id, language=web.session.language
        )
        if record is not None:
            append_feedback(feedback_path(self.settings.data_dir), record)
            gr.Info(ui_text(web.language, "feedback_saved"))

    # -- form ----------------------------------------------------------------------------

    def apply_form(self, web: WebSession | None, *values: Any) -> tuple[Any, ...]:
        web = web if web is not None else WebSession()
        try:
            form = form_from_values(**dict(zip(FORM_FIELDS, values, strict=True)))
        except ValueError as exc:
            raise gr.Error(f"{ui_text(web.language, 'error_prefix')} {exc}") from None
        defaults = assumed_defaults(web.session.state, self._catalog)
        web.session.state = state_from_form(form, web.session.state, defaults)
        web.panel = compute_panel(web.session.state, self.catalog(), web.uploaded_model())
        return (web, *self.panel_outputs(web))

    def upload(self, web: WebSession | None, path: str | None) -> tuple[Any, ...]:
        web = web if web is not None else WebSession()
        if not path:
            return (web, *self.form_outputs(web), *self.panel_outputs(web))
        try:
            arch = model_from_upload(Path(path))
        except AdvisorError as exc:
            raise gr.Error(f"{ui_text(web.language, 'error_prefix')} {exc}") from None
        web.uploaded, web.uploaded_as = arch, str(arch.total_params())
        web.session.state = web.session.state.model_copy(update={"model": web.uploaded_as})
        web.panel = compute_panel(web.session.state, self.catalog(), arch)
        note = f"{ui_text(web.language, 'uploaded')}: {arch.name} ({arch.total_params():,})"
        web.panel.notes.insert(0, note)
        return (web, *self.form_outputs(web), *self.panel_outputs(web))


def _chat_column(app: App, web_state: gr.State) -> tuple[Any, ...]:
    chatbot = gr.Chatbot(
        label=_t("chat"), show_label=False, elem_id="chat", height=640, buttons=["copy"],
        feedback_options=("Like", "Dislike"), placeholder="**GPU Advisor**",
    )  # fmt: skip
    with gr.Row(equal_height=True):
        textbox = gr.Textbox(
            label="message", placeholder=_t("chat_placeholder"), show_label=False, scale=6,
            lines=1, max_lines=6,
            max_length=MAX_MESSAGE_CHARS + 1, elem_id="chat-input", submit_btn=False,
        )  # fmt: skip
        send = gr.Button(_t("send"), variant="primary", scale=1, elem_id="send", min_width=90)
    with gr.Row():
        language = gr.Dropdown(
            _lang_choices(), value="auto", label=_t("answer_language"), elem_id="language"
        )
        new_chat = gr.Button(_t("new_chat"), variant="secondary", elem_id="new-chat")
    prompts = example_prompts()
    gr.Examples(
        examples=[[prompt] for _, prompt in prompts], inputs=[textbox], label=_t("examples"),
        example_labels=[f"{code.upper()} · {prompt}" for code, prompt in prompts],
        examples_per_page=12,
    )  # fmt: skip
    chatbot.like(app.feedback, [web_state], None, api_visibility="private")
    return chatbot, textbox, send, language, new_chat


def _job_form() -> tuple[list[Any], Any, Any]:
    models = [(arch.name, arch.id) for arch in list_models()]
    with gr.Accordion(_t("job_panel"), open=True, elem_id="job-form"):
        with gr.Row():
            model = gr.Dropdown(models, label=_t("model"), info=_t("model_info"),
                                allow_custom_value=True, value=None, scale=2)  # fmt: skip
            method = gr.Dropdown(METHODS, label=_t("method"), value=None)
            precision = gr.Dropdown(PRECISIONS, label=_t("precision"), value=None)
        with gr.Row():
            seq_len = gr.Number(label=_t("seq_len"), precision=0, minimum=0)
            micro = gr.Number(label=_t("micro_batch"), precision=0, minimum=0)
            gpus = gr.Number(label=_t("num_gpus"), precision=0, minimum=0)
            tokens = gr.Number(label=_t("tokens_m"), minimum=0)
        with gr.Row():
            budget = gr.Number(label=_t("budget_usd"), minimum=0)
            price = gr.Number(label=_t("max_price_usd"), minimum=0)
            currency = gr.Dropdown(["USD", "EUR", "TRY"], value="USD", label=_t("currency"))
            spot = gr.Radio(SPOT, label=_t("spot"), value=None)
        with gr.Row():
            upload = gr.UploadButton(_t("upload_config"), file_types=[".json"], type="filepath",
                                     elem_id="config-upload", size="md")  # fmt: skip
            apply = gr.Button(_t("apply_job"), variant="primary", elem_id="apply-job", size="md")
    fields = [model, method, precision, seq_len, micro, gpus, tokens, budget, price, currency, spot]
    return fields, upload, apply


def _panel_column() -> tuple[list[Any], list[Any], Any, Any, Any]:
    fields, upload, apply = _job_form()
    notes = gr.Markdown(elem_id="panel-notes")
    chart = gr.HTML(elem_id="memory-chart")
    ranked = gr.Dataframe(label=_t("ranked"), interactive=False, wrap=True, max_height=420,
                          elem_id="ranked", show_search="search", buttons=["copy", "fullscreen"],
                          pinned_columns=3, column_widths=RANKED_WIDTHS)  # fmt: skip
    with gr.Accordion(_t("excluded"), open=False, elem_id="excluded-box") as excluded_box:
        excluded = gr.Dataframe(interactive=False, wrap=True, max_height=320, elem_id="excluded",
                                show_search="search", column_widths=EXCLUDED_WIDTHS)  # fmt: skip
    with gr.Accordion(_t("launch_spec"), open=True, elem_id="launch"):
        choose = gr.Dropdown([], label=_t("choose_instance"), elem_id="launch-choice")
        code = gr.Code(language="yaml", interactive=False, label="SkyPilot task.yaml",
                       elem_id="launch-yaml", lines=10)  # fmt: skip
        download = gr.DownloadButton(_t("download_json"), visible=False, elem_id="launch-json")
    outputs = [notes, chart, ranked, excluded_box, excluded, choose, code, download]
    return fields, outputs, upload, apply, choose


def build_demo(settings: Settings, *, assistant: Assistant | None = None) -> gr.Blocks:
    """The whole app for `settings`; `assistant` replaces the one Settings would build (tests)."""
    app = App(settings, assistant or Assistant(settings))
    secret = browser_secret(settings.data_dir)
    with gr.Blocks(title="GPU Advisor", analytics_enabled=False, fill_width=True) as demo:
        web_state = gr.State(None)
        browser = gr.BrowserState(None, storage_key=STORAGE_KEY, secret=secret)
        gr.Markdown("# GPU Advisor", elem_id="title")
        gr.Markdown(_t("subtitle"))
        with gr.Tabs():
            with gr.Tab(_t("tab_chat"), id="chat-tab"), gr.Row(equal_height=False):
                with gr.Column(scale=3, min_width=420):
                    chatbot, textbox, send, language, new_chat = _chat_column(app, web_state)
                with gr.Column(scale=2, min_width=380):
                    fields, panel, upload, apply, choose = _panel_column()
            catalog = _catalog_tab(app, web_state)
            _knowledge_tab(app)
            estimator = _estimator_tab(app, web_state)
        gr.Markdown(_t("privacy_note"), elem_id="privacy")
        chat = (chatbot, textbox, send, language, new_chat)
        _wire_chat(app, demo, web_state, browser, chat, fields, panel, [catalog, estimator])
        _wire_panel(app, web_state, browser, fields, panel, upload, apply, choose)
        for fn in PublicApi(app.catalog, app.assistant.resources.knowledge).functions():
            gr.api(fn, api_name=fn.__name__)
    return demo


def _wire_chat(
    app: App, demo: gr.Blocks, web_state: gr.State, browser: gr.BrowserState,
    chat: tuple[Any, ...], fields: list[Any], panel: list[Any], tabs: list[list[Any]],
) -> None:  # fmt: skip
    chatbot, textbox, send, language, new_chat = chat
    after_turn = [*fields, *panel]
    turn = gr.on(
        [textbox.submit, send.click], app.respond, [textbox, language, web_state],
        [chatbot, web_state], api_name="chat", concurrency_id="turn",
        api_visibility="undocumented",  # callable (see README); not an MCP tool: it has state
    )  # fmt: skip
    gr.on([textbox.submit, send.click], None, None, textbox, js="() => ''", queue=False)
    turn.then(
        lambda web: (*app.form_outputs(web), *app.panel_outputs(web)),
        [web_state],
        after_turn,
        api_visibility="private",
    ).then(lambda web: web.to_browser(), [web_state], [browser], api_visibility="private")

    def restore(raw: Any, request: gr.Request) -> tuple[Any, ...]:
        web = WebSession.from_browser(
            raw, language_from_header(request.headers.get("accept-language"))
        )
        if web.session.state.model is not None:
            web.panel = compute_panel(web.session.state, app.catalog(), None)
        return (web, web.chat, *app.form_outputs(web), *app.panel_outputs(web))

    def reset(web: WebSession | None) -> tuple[Any, ...]:
        fresh = WebSession(ui_lang=web.ui_lang if web else "en")
        return (fresh, [], *app.form_outputs(fresh), *app.panel_outputs(fresh), None)

    load = demo.load(
        restore, [browser], [web_state, chatbot, *after_turn], api_visibility="private"
    )
    for fill, inputs, outputs in tabs:  # the catalog and estimator tabs, in the page's language
        load = load.then(fill, inputs, outputs, api_visibility="private")
    new_chat.click(reset, [web_state], [web_state, chatbot, *after_turn, browser],
                   api_visibility="private")  # fmt: skip


def _wire_panel(
    app: App, web_state: gr.State, browser: gr.BrowserState, fields: list[Any],
    panel: list[Any], upload: Any, apply: Any, choose: Any,
) -> None:  # fmt: skip
    model, method, precision, *numbers, currency, spot = fields
    triggers = [apply.click, model.input, model.blur, method.input, precision.input, spot.input,
                currency.input, *(n.submit for n in numbers)]  # fmt: skip
    gr.on(triggers, app.apply_form, [web_state, *fields], [web_state, *panel],
          api_visibility="private", concurrency_id="turn").then(
        lambda web: web.to_browser(), [web_state], [browser], api_visibility="private"
    )  # fmt: skip
    upload.upload(app.upload, [web_state, upload], [web_state, *fields, *panel],
                  api_visibility="private")  # fmt: skip

    def pick(web: WebSession | None, chosen: str | None) -> tuple[Any, ...]:
        web = web if web is not None else WebSession()
        web.chosen = chosen
        return app.panel_outputs(web)[5:]

    choose.input(pick, [web_state, choose], panel[5:], api_visibility="private")


def _catalog_tab(app: App, web_state: gr.State) -> list[Any]:
    """The catalog tab; returns (fn, inputs, outputs) that fill its table."""
    catalog = app.catalog()
    with gr.Tab(_t("tab_catalog"), id="catalog-tab"):
        with gr.Row():
            gpu = gr.Dropdown(sorted({i.gpu for i in catalog}), multiselect=True, label=_t("gpu"),
                              elem_id="cat-gpu")  # fmt: skip
            vram = gr.Number(label=_t("min_vram"), minimum=0, elem_id="cat-vram")
            provider = gr.Dropdown(catalog.providers(), multiselect=True, label=_t("provider"),
                                   elem_id="cat-provider")  # fmt: skip
            region = gr.Dropdown(sorted({r for i in catalog for r in i.regions}), multiselect=True,
                                 label=_t("region"), elem_id="cat-region")  # fmt: skip
            price = gr.Number(label=_t("max_price"), minimum=0, elem_id="cat-price")
            spot = gr.Checkbox(label=_t("spot_only"), elem_id="cat-spot")
        count = gr.Markdown(elem_id="cat-count")
        table = gr.Dataframe(interactive=False, wrap=False, max_height=640, elem_id="catalog",
                             show_search="search", column_widths=CATALOG_WIDTHS)  # fmt: skip
        gr.Markdown(_t("catalog_note"))

    def show(web: WebSession | None, *values: Any) -> tuple[Any, ...]:
        lang = web.language if web else "en"
        names = ("gpus", "min_vram_gib", "providers", "regions", "max_price", "spot_only")
        filters = CatalogFilters(**dict(zip(names, values, strict=True)))
        stale = app.settings.stale_price_days
        count_text, table = filter_catalog_table(catalog, filters, date.today(), stale, lang)
        return count_text, _frame(table)

    inputs = [web_state, gpu, vram, provider, region, price, spot]
    gr.on([gpu.change, provider.change, region.change, spot.change, vram.submit, price.submit],
          show, inputs, [count, table], api_visibility="private")  # fmt: skip
    return [show, inputs, [count, table]]


def _knowledge_tab(app: App) -> None:
    with gr.Tab(_t("tab_knowledge"), id="knowledge-tab"):
        with gr.Row(equal_height=True):
            query = gr.Textbox(label=_t("question"), placeholder=_t("kb_placeholder"), scale=4,
                               elem_id="kb-query")  # fmt: skip
            lang = gr.Dropdown(_lang_choices(), value="auto", label=_t("show_in_language"),
                               elem_id="kb-lang")  # fmt: skip
            search = gr.Button(_t("search"), variant="primary", elem_id="kb-search")
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


def _estimator_tab(app: App, web_state: gr.State) -> list[Any]:
    models = [(arch.name, arch.id) for arch in list_models()]
    with gr.Tab(_t("tab_estimator"), id="estimator-tab"), gr.Row():
        with gr.Column(scale=2):
            model = gr.Dropdown(models, value="meta-llama/Llama-3.1-8B", allow_custom_value=True,
                                label=_t("model"), info=_t("model_info"))  # fmt: skip
            with gr.Row():
                method = gr.Dropdown(METHODS, value="qlora", label=_t("method"))
                precision = gr.Dropdown(PRECISIONS, value="bf16-mixed", label=_t("precision"))
            with gr.Row():
                seq_len = gr.Number(2048, label=_t("seq_len"), precision=0, minimum=1)
                micro = gr.Number(1, label=_t("micro_batch"), precision=0, minimum=1)
                gpus = gr.Number(1, label=_t("num_gpus"), precision=0, minimum=1)
            with gr.Row():
                ckpt = gr.Dropdown(["none", "selective", "full"], value="full",
                                   label=_t("gradient_checkpointing"))  # fmt: skip
                rank = gr.Number(16, label=_t("lora_rank"), precision=0, minimum=1)
                zero = gr.Dropdown([0, 1, 2, 3], value=0, label=_t("zero_stage"))
            compare = gr.Dropdown([g.id for g in list_gpus()], value=COMPARE_GPUS,
                                  multiselect=True, label=_t("compare_gpus"))  # fmt: skip
            run = gr.Button(_t("estimate"), variant="primary", elem_id="est-run")
        with gr.Column(scale=3):
            chart = gr.HTML(elem_id="est-chart")
            parts = gr.Dataframe(interactive=False, elem_id="est-parts")
            with gr.Accordion(_t("assumptions"), open=False):
                assumptions = gr.Markdown(elem_id="est-assumptions")

    def run_estimate(web: WebSession | None, *values: Any) -> tuple[Any, ...]:
        name, meth, prec, seq, mb, n, gc, r, z, gpu_names = values
        lora = {"lora_rank": int(r or 16)} if meth in ("lora", "qlora") else {}
        try:
            inp = EstimateInput(
                model=str(name or ""), method=meth, precision=prec, seq_len=int(seq or 2048),
                micro_batch_size=int(mb or 1), num_gpus=int(n or 1), gradient_checkpointing=gc,
                zero_stage=int(z or 0), **lora,
            )  # fmt: skip
            view = estimator_view(inp, gpu_names or [], web.language if web else "en")
        except AdvisorError as exc:
            raise gr.Error(str(exc)) from None
        return view.chart_svg, _frame(view.parts), view.assumptions_markdown

    inputs = [web_state, model, method, precision, seq_len, micro, gpus, ckpt, rank, zero, compare]
    gr.on([run.click, method.input, precision.input, ckpt.input, zero.input, compare.input],
          run_estimate, inputs, [chart, parts, assumptions], api_visibility="private")  # fmt: skip
    return [run_estimate, inputs, [chart, parts, assumptions]]


def launch_options(settings: Settings) -> dict[str, Any]:
    """Keyword arguments of `Blocks.launch` for `settings` (host, port, auth, MCP, theme...)."""
    auth = None
    if settings.auth_user and settings.auth_password:
        auth = (settings.auth_user, settings.auth_password.get_secret_value())
    return {
        "server_name": settings.host,
        "server_port": settings.port,
        "auth": auth,
        "mcp_server": settings.mcp,
        "i18n": i18n(),
        "theme": gr.themes.Soft(font=["system-ui", "sans-serif"], font_mono=["monospace"]),
        "css": CSS,
        "max_file_size": UPLOAD_LIMIT,
        "blocked_paths": [str(settings.data_dir)],
        "show_error": True,
        "footer_links": ["api"],
    }


def settings_from_args(argv: Sequence[str] | None = None) -> Settings:
    """Settings from the environment, with the command-line flags on top."""
    parser = argparse.ArgumentParser(prog="app.py", description=__doc__.splitlines()[0])
    parser.add_argument("--host", help="interface to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, help="port to listen on (default 7860)")
    parser.add_argument("--mcp", action="store_true", default=None, help="also serve MCP tools")
    args = parser.parse_args(argv)
    overrides = {k: v for k, v in vars(args).items() if v is not None}
    return Settings(**overrides)


def main(argv: Sequence[str] | None = None) -> None:
    for key, value in OFFLINE_ENV.items():
        os.environ.setdefault(key, value)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    settings = settings_from_args(argv)
    assistant = Assistant(settings)
    demo = build_demo(settings, assistant=assistant)
    demo.queue(default_concurrency_limit=CONCURRENCY, max_size=QUEUE_SIZE)
    threading.Thread(target=assistant.warm_up, name="warm-up", daemon=True).start()
    demo.launch(**launch_options(settings))


if __name__ == "__main__":
    main()
