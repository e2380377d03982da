"""The job panel beside the chat: the job form (drawn from `assistant.web.form.form_widgets`,
so every widget is a field of the job), the memory chart, the ranked and excluded tables and
the launch spec; and the wiring of form edits, uploads and the launch choice."""

from __future__ import annotations

from typing import Any

import gradio as gr

from assistant.web.blocks.common import Widths, t
from assistant.web.blocks.handlers import App
from assistant.web.form import CURRENCIES, FormWidget, form_widgets
from assistant.web.session import WebSession
from tools.architectures.registry import list_models

__all__ = ["panel_column", "wire_panel"]

RANKED_WIDTHS: Widths = [44, 100, 190, 120, 84, 96, 70, 80, 80, 90, 80, 220]
EXCLUDED_WIDTHS: Widths = [100, 190, 120, 100, 420]
# The interface string that labels each form field.
FORM_LABELS = {
    "model": "model", "method": "method", "precision": "precision", "seq_len": "seq_len",
    "micro_batch_size": "micro_batch", "num_gpus": "num_gpus", "tokens": "tokens_m",
    "budget": "budget_usd", "max_price_per_hour": "max_price_usd", "spot": "spot",
}  # fmt: skip
_ROWS = (("model", "method", "precision"), ("seq_len", "micro_batch_size", "num_gpus", "tokens"),
         ("budget", "max_price_per_hour", "currency", "spot"))  # fmt: skip


def _widget(widget: FormWidget) -> Any:
    label = t(FORM_LABELS[widget.field])
    if widget.kind == "model":
        models = [(arch.name, arch.id) for arch in list_models()]
        return gr.Dropdown(models, label=label, info=t("model_info"), allow_custom_value=True,
                           value=None, scale=2)  # fmt: skip
    if widget.kind == "choice" and widget.field == "spot":
        return gr.Radio(list(widget.choices), label=label, value=None)
    if widget.kind == "choice":
        return gr.Dropdown(list(widget.choices), label=label, value=None)
    return gr.Number(label=label, minimum=0, precision=0 if widget.kind == "count" else None)


def job_form() -> tuple[list[Any], Any, Any]:
    """The form's widgets (form fields in order, then the currency), upload and apply."""
    made: dict[str, Any] = {}
    widgets: dict[str, FormWidget] = {w.field: w for w in form_widgets()}
    with gr.Accordion(t("job_panel"), open=True, elem_id="job-form"):
        for row in _ROWS:
            with gr.Row():
                for name in row:
                    if name == "currency":
                        made[name] = gr.Dropdown(list(CURRENCIES), value="USD",
                                                 label=t("currency"))  # fmt: skip
                    else:
                        made[name] = _widget(widgets[name])
        with gr.Row():
            upload = gr.UploadButton(t("upload_config"), file_types=[".json"], type="filepath",
                                     elem_id="config-upload", size="md")  # fmt: skip
            apply = gr.Button(t("apply_job"), variant="primary", elem_id="apply-job", size="md")
    fields = [made[w.field] for w in form_widgets()] + [made["currency"]]
    return fields, upload, apply


def panel_column() -> tuple[list[Any], list[Any], Any, Any, Any]:
    """The form, then notes, chart, tables and the launch spec."""
    fields, upload, apply = job_form()
    notes = gr.Markdown(elem_id="panel-notes")
    chart = gr.HTML(elem_id="memory-chart")
    ranked = gr.Dataframe(label=t("ranked"), interactive=False, wrap=True, max_height=420,
                          elem_id="ranked", show_search="search", buttons=["copy", "fullscreen"],
                          pinned_columns=3, column_widths=RANKED_WIDTHS)  # fmt: skip
    with gr.Accordion(t("excluded"), open=False, elem_id="excluded-box") as excluded_box:
        excluded = gr.Dataframe(interactive=False, wrap=True, max_height=320, elem_id="excluded",
                                show_search="search", column_widths=EXCLUDED_WIDTHS)  # fmt: skip
    with gr.Accordion(t("launch_spec"), open=True, elem_id="launch"):
        choose = gr.Dropdown([], label=t("choose_instance"), elem_id="launch-choice")
        code = gr.Code(language="yaml", interactive=False, label="SkyPilot task.yaml",
                       elem_id="launch-yaml", lines=10)  # fmt: skip
        download = gr.DownloadButton(t("download_json"), visible=False, elem_id="launch-json")
    outputs = [notes, chart, ranked, excluded_box, excluded, choose, code, download]
    return fields, outputs, upload, apply, choose


def wire_panel(
    app: App, web_state: gr.State, browser: gr.BrowserState, fields: list[Any],
    panel: list[Any], upload: Any, apply: Any, choose: Any,
) -> None:  # fmt: skip
    """Form edits, uploads and the launch choice; each edit saves the conversation."""
    choice_inputs = [f for f in fields if isinstance(f, gr.Dropdown | gr.Radio)]
    numbers = [f for f in fields if isinstance(f, gr.Number)]
    triggers = [apply.click, *(f.input for f in choice_inputs), fields[0].blur,
                *(n.submit for n in numbers)]  # fmt: skip
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
