"""The job panel: the job form (drawn from `assistant.web.form.form_widgets`, so every widget is
a field of the job; folded until there is a job), the two charts of the decision beside the chat,
and below them the ranked table (key columns, all columns behind an expander), the excluded
instances and the launch spec of the selected row; and the wiring of form edits, uploads and the
launch choice."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import gradio as gr

from assistant.web.blocks.common import Widths, choice_input, input_row, number_input, t
from assistant.web.blocks.handlers import App
from assistant.web.form import CURRENCIES, FormWidget, form_widgets
from assistant.web.ui_strings import vocabulary_key
from tools.architectures.registry import list_models

__all__ = ["PanelParts", "job_form", "panel_charts", "panel_tables", "wire_panel"]

RANKED_WIDTHS: Widths = [48, 250, 150, 210, 150, 100, 80, 110, 110, 100]
MORE_WIDTHS: Widths = [48, 250, 110, 110, 110, 110, 200, 200, 130]
EXCLUDED_WIDTHS: Widths = [260, 160, 140, 520]
# The interface string that labels each form field.
FORM_LABELS = {
    "model": "model",
    "method": "method",
    "precision": "precision",
    "seq_len": "seq_len",
    "micro_batch_size": "micro_batch",
    "num_gpus": "num_gpus",
    "tokens": "tokens_m",
    "budget": "budget_usd",
    "max_price_per_hour": "max_price_usd",
    "spot": "spot",
}
_ROWS = (
    ("model", "method", "precision"),
    ("seq_len", "micro_batch_size", "num_gpus", "tokens"),
    ("budget", "max_price_per_hour", "currency", "spot"),
)
_VOCABULARY = {"method": "method", "precision": "precision", "spot": "spot"}


@dataclass
class PanelParts:
    """The panel's components: the form's inputs and outputs, and the panel's outputs."""

    fields: list[Any]  # the form fields (FORM_FIELDS order), then the currency
    form_box: Any
    upload: Any
    apply: Any
    outputs: list[Any] = field(default_factory=list)  # notes ... download (PANEL_OUTPUTS)
    ranked: Any = None
    choose: Any = None

    @property
    def form_outputs(self) -> list[Any]:
        return [*self.fields, self.form_box]

    @property
    def launch_outputs(self) -> list[Any]:
        return self.outputs[-4:]


def _widget(widget: FormWidget) -> Any:
    key = FORM_LABELS[widget.field]
    if widget.kind == "model":
        models = [(arch.name, arch.id) for arch in list_models()]
        return choice_input(
            models, key, "form-model", info=t("model_info"), allow_custom_value=True,
            value=None, scale=2,
        )  # fmt: skip
    if widget.kind == "choice":
        kind = _VOCABULARY[widget.field]
        options = [(t(vocabulary_key(kind, value)), value) for value in widget.choices]
        if widget.field == "spot":
            return gr.Radio(options, label=t(key), value=None, elem_id="form-spot")
        return choice_input(options, key, f"form-{widget.field}", value=None)
    elem_id = f"form-{widget.field.replace('_', '-')}"
    return number_input(key, elem_id, precision=0 if widget.kind == "count" else None)


def job_form() -> PanelParts:
    """The form (folded until there is a job): its widgets, then upload and apply."""
    made: dict[str, Any] = {}
    widgets: dict[str, FormWidget] = {w.field: w for w in form_widgets()}
    with gr.Accordion(t("job_panel"), open=False, elem_id="job-form") as box:
        for row in _ROWS:
            with input_row():
                for name in row:
                    if name == "currency":
                        made[name] = choice_input(
                            list(CURRENCIES), "currency", "form-currency", value="USD"
                        )
                    else:
                        made[name] = _widget(widgets[name])
        with input_row():
            upload = gr.UploadButton(
                t("upload_config"),
                type="filepath",
                elem_id="config-upload",
                size="md",
            )
            apply = gr.Button(t("apply_job"), variant="primary", elem_id="apply-job", size="md")
    fields = [made[w.field] for w in form_widgets()] + [made["currency"]]
    return PanelParts(fields=fields, form_box=box, upload=upload, apply=apply)


def panel_charts(parts: PanelParts) -> None:
    """Notes, the memory chart of each top option's plan, the cost-against-time chart."""
    notes = gr.Markdown(elem_id="panel-notes")
    plan = gr.HTML(elem_id="memory-chart")
    cost = gr.Plot(label=t("cost_chart_title"), elem_id="cost-chart", visible=False)
    caption = gr.Markdown(elem_id="cost-caption")
    parts.outputs = [notes, plan, cost, caption]


def panel_tables(parts: PanelParts) -> None:
    """The ranked table (key columns; all columns behind an expander), the excluded instances
    and the launch spec."""
    results = gr.Column(visible=False, elem_id="results")
    with results:
        ranked, more, excluded_box, excluded, launch = _results()
    parts.outputs += [results, *ranked, more, excluded_box, excluded, *launch]
    parts.ranked, parts.choose = ranked[1], launch[1]


def _results() -> tuple[Any, ...]:
    count = gr.Markdown(elem_id="ranked-count")
    ranked = gr.Dataframe(
        label=t("ranked"),
        interactive=False,
        wrap=True,
        max_height=460,
        elem_id="ranked",
        buttons=["copy", "fullscreen"],
        column_widths=RANKED_WIDTHS,
    )
    with gr.Accordion(t("more_columns"), open=False, elem_id="ranked-more-box"):
        more = gr.Dataframe(
            interactive=False,
            wrap=True,
            max_height=460,
            elem_id="ranked-more",
            column_widths=MORE_WIDTHS,
        )
    with gr.Accordion(t("excluded"), open=False, elem_id="excluded-box") as excluded_box:
        excluded = gr.Dataframe(
            interactive=False,
            wrap=True,
            max_height=360,
            elem_id="excluded",
            column_widths=EXCLUDED_WIDTHS,
        )
    with gr.Accordion(t("launch_spec"), open=True, elem_id="launch") as launch_box:
        choose = gr.Dropdown([], label=t("choose_instance"), elem_id="launch-choice")
        code = gr.Code(
            language="yaml",
            interactive=False,
            label="SkyPilot task.yaml",
            elem_id="launch-yaml",
            lines=10,
        )
        download = gr.DownloadButton(t("download_json"), visible=False, elem_id="launch-json")
    return [count, ranked], more, excluded_box, excluded, [launch_box, choose, code, download]


def wire_panel(
    app: App,
    web_state: gr.State,
    browser: gr.BrowserState,
    parts: PanelParts,
    job_outputs: list[Any],
) -> None:
    """Form edits and uploads change the job (and say so in the chat); a selected row or a
    launch choice picks the launch spec; each saves what the browser keeps."""
    fields = parts.fields
    choices = [f for f in fields if isinstance(f, gr.Dropdown | gr.Radio)]
    numbers = [f for f in fields if isinstance(f, gr.Number)]
    triggers = [
        parts.apply.click,
        *(f.input for f in choices),
        fields[0].blur,
        *(n.submit for n in numbers),
    ]

    def save(dependency: Any) -> None:
        dependency.then(app.save_browser, [web_state], [browser], api_visibility="private")

    save(
        gr.on(
            triggers,
            app.apply_form,
            [web_state, *fields],
            job_outputs,
            api_visibility="private",
            concurrency_id="turn",
            trigger_mode="always_last",  # an edit made while one is applied runs after it
        )
    )
    save(
        parts.upload.upload(
            app.upload, [web_state, parts.upload], job_outputs, api_visibility="private"
        )
    )
    save(
        parts.choose.input(
            app.pick, [web_state, parts.choose], parts.launch_outputs, api_visibility="private"
        )
    )
    save(
        parts.ranked.select(
            app.pick_row, [web_state], parts.launch_outputs, api_visibility="private"
        )
    )
