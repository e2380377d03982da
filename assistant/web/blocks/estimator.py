"""The Memory estimator tab: one estimate of a job set up by hand (a registry model, a size or an
uploaded config.json), drawn against GPUs to compare, with its parts and assumptions. Returns the
(handler, inputs, outputs) that fill it in the page's language."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gradio as gr

from assistant.web.blocks.common import guarded, inform, t, table_update, warn
from assistant.web.blocks.handlers import App
from assistant.web.state.session import WebSession
from assistant.web.ui_strings import ui_format, vocabulary_key
from assistant.web.uploads import UploadError, model_from_upload, upload_problem
from assistant.web.views import estimator_view
from tools.advice import estimate_job
from tools.architectures.architecture import ModelArch
from tools.architectures.registry import list_models
from tools.enums import Checkpointing, Method, Precision, choices
from tools.gpus import list_gpus
from tools.job import JobSpec

__all__ = ["estimator_tab"]

COMPARE_GPUS = ["H100-SXM", "A100-80GB-SXM", "L40S", "RTX4090"]
_FIELDS = (
    "model",
    "method",
    "precision",
    "seq_len",
    "micro_batch_size",
    "num_gpus",
    "gradient_checkpointing",
    "lora_rank",
    "zero_stage",
)


def _lang(web: WebSession | None, *_rest: Any) -> str:
    return web.language if isinstance(web, WebSession) else "en"


def _choices(kind: str, values: tuple[str, ...]) -> list[tuple[Any, str]]:
    return [(t(vocabulary_key(kind, value)), value) for value in values]


def _job(values: dict[str, Any], uploaded: ModelArch | None) -> JobSpec:
    """The estimate's job: blank (or 0) fields open; the uploaded config when it is named."""
    given = {k: v for k, v in values.items() if v not in (None, "", 0)}
    if given.get("method") in ("full", "pretrain"):
        given.pop("lora_rank", None)  # the rank widget keeps a value; it means nothing here
    if uploaded is not None and given.get("model") == uploaded.name:
        given["model"] = uploaded
    return JobSpec.parse(given)


def estimator_tab(app: App, web_state: gr.State) -> list[Any]:
    """One estimate of a job: blank fields take the job's stated defaults, listed first."""
    models = [(arch.name, arch.id) for arch in list_models()]
    uploaded = gr.State(None)
    with gr.Row():
        with gr.Column(scale=2, min_width=300):
            model = gr.Dropdown(
                models,
                value="meta-llama/Llama-3.1-8B",
                allow_custom_value=True,
                label=t("model"),
                info=t("model_info"),
                elem_id="est-model",
            )
            upload = gr.UploadButton(
                t("upload_config"),
                type="filepath",
                elem_id="est-upload",
                size="md",
            )
            with gr.Row():
                method = gr.Dropdown(
                    _choices("method", choices(Method)),
                    value=None,
                    label=t("method"),
                    elem_id="est-method",
                )
                precision = gr.Dropdown(
                    _choices("precision", choices(Precision)), value=None, label=t("precision")
                )
            with gr.Row():
                seq_len = gr.Number(None, label=t("seq_len"), precision=0, minimum=0)
                micro = gr.Number(None, label=t("micro_batch"), precision=0, minimum=0)
                gpus = gr.Number(
                    None, label=t("est_num_gpus"), precision=0, minimum=0, elem_id="est-gpus"
                )
            with gr.Row():
                ckpt = gr.Dropdown(
                    _choices("checkpointing", choices(Checkpointing)),
                    value=None,
                    label=t("gradient_checkpointing"),
                )
                rank = gr.Number(None, label=t("lora_rank"), precision=0, minimum=0)
                zero = gr.Dropdown([0, 1, 2, 3], value=None, label=t("zero_stage"))
            compare = gr.Dropdown(
                [g.id for g in list_gpus()],
                value=COMPARE_GPUS,
                multiselect=True,
                label=t("compare_gpus"),
            )
            run = gr.Button(t("estimate"), variant="primary", elem_id="est-run")
        with gr.Column(scale=3, min_width=300):
            chart = gr.HTML(elem_id="est-chart")
            parts = gr.Dataframe(interactive=False, elem_id="est-parts")
            with gr.Accordion(t("assumptions"), open=False):
                assumptions = gr.Markdown(elem_id="est-assumptions")

    @guarded(3, _lang)
    def run_estimate(web: WebSession | None, arch: ModelArch | None, *values: Any) -> Any:
        *fields, gpu_names = values
        lang = web.language if web else "en"
        resolved, result = estimate_job(_job(dict(zip(_FIELDS, fields, strict=True)), arch))
        view = estimator_view(result, resolved.shown_assumptions("estimate"), gpu_names or [], lang)
        return view.chart_svg, table_update(view.parts), view.assumptions_markdown

    @guarded(2, _lang)
    def read_config(web: WebSession | None, path: str | None) -> tuple[Any, ...]:
        lang = web.language if web else "en"
        if not path:
            return gr.skip(), gr.skip()
        try:
            arch = model_from_upload(Path(path), lang)
        except UploadError as exc:
            warn(lang, upload_problem(exc, Path(path).name, lang))
            return gr.skip(), gr.skip()
        inform(lang, ui_format(lang, "est_uploaded", name=arch.name))
        return arch, gr.Dropdown(value=arch.name)

    inputs = [
        web_state,
        uploaded,
        model,
        method,
        precision,
        seq_len,
        micro,
        gpus,
        ckpt,
        rank,
        zero,
        compare,
    ]
    outputs = [chart, parts, assumptions]
    gr.on(
        [run.click, method.input, precision.input, ckpt.input, zero.input, compare.input],
        run_estimate,
        inputs,
        outputs,
        api_visibility="private",
    )
    upload.upload(
        read_config, [web_state, upload], [uploaded, model], api_visibility="private"
    ).then(run_estimate, inputs, outputs, api_visibility="private")
    return [run_estimate, inputs, outputs]
