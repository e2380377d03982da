"""A job's memory estimate, and the estimator input a language-model job resolves to.

`estimate_job(spec)` estimates any job: a language model through `resolve_estimate` and
`tools.memory.estimate`, a diffusion pipeline or vision-language model (`image_model`) through
`tools.advice.images`, imported only for such a job. `language_input` is the one place a
language-model `JobSpec` becomes an `EstimateInput`; `tools.advice.request.resolve_job` builds
the ranking's request on the same result. This path needs no ranking and no catalog, so
`gpu-advisor estimate` imports only the job model, the architectures and the estimator.

Strict resolution (the CLI and the API) raises an `InvalidInputError` for a value the estimator
rejects; lenient resolution (a conversation, a form) drops that value with a notice and uses the
default, so one mistyped number never stops the answer.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tools.advice.assumed import (
    Assumed,
    JobNotice,
    ResolvedEstimate,
    invalid_notice,
    money_limits,
    resolution,
    spec_field,
    value_of,
    value_or_default,
)
from tools.architectures.architecture import ModelArch
from tools.architectures.multimodal import find_multimodal, read_model_index, vlm_from_config_file
from tools.architectures.registry import resolve_model
from tools.errors import InvalidInputError
from tools.job import FIELD_GROUPS, JobSpec
from tools.job.spec import IMAGE_FIELDS
from tools.memory import LORA_METHODS, EstimateInput, MemoryEstimate, estimate
from tools.memory.images.stacks import check_stack
from tools.units import GIB

if TYPE_CHECKING:
    from tools.architectures.multimodal import MultimodalModel

__all__ = [
    "check_language_job",
    "estimate_job",
    "image_model",
    "language_input",
    "resolve_estimate",
]

# Training fields passed to the estimator under the same name, in the order they are resolved.
_ESTIMATOR_FIELDS: tuple[str, ...] = tuple(
    name
    for name in FIELD_GROUPS["training"] + FIELD_GROUPS["plan"]
    if name != "cuda_context_gib" and name not in IMAGE_FIELDS
)
_LORA_ONLY = ("lora_rank", "lora_alpha", "lora_targets", "lora_dropout", "frozen_base_dtype")
_QLORA_ONLY = ("qlora_double_quant", "qlora_keeps_input", "qlora_lm_head")


def estimate_job(spec: JobSpec, *, strict: bool = True) -> tuple[ResolvedEstimate, MemoryEstimate]:
    """The job resolved and its memory estimate (the plan as given: one GPU by default); a
    diffusion pipeline or vision-language model goes through `tools.advice.images`."""
    image = image_model(spec)
    if image is not None:
        # deferred: the image estimator and its job type, for an image-model job only
        from tools.advice.images import estimate_image_spec

        assumed: list[Assumed] = []
        side = resolution(spec, image, assumed)
        result = estimate_image_spec(spec, image, partial(value_of, spec, assumed), side)
        return ResolvedEstimate(spec=spec, assumed=assumed), result
    resolved = resolve_estimate(spec, strict=strict)
    if resolved.estimate_input is None:
        raise InvalidInputError("model", None, "a model name, a parameter count or a config")
    return resolved, estimate(resolved.estimate_input)


def resolve_estimate(spec: JobSpec, *, strict: bool = True) -> ResolvedEstimate:
    """A language-model job resolved for the estimator: its input, every default it used, and a
    notice for each money limit converted or not applied and each value dropped (lenient)."""
    notices, _ = money_limits(spec)
    if spec.model is None:
        return ResolvedEstimate(spec=spec, missing=["model"], notices=notices)
    _, assumed, job = language_input(spec, notices, strict)
    if job is None:
        return ResolvedEstimate(spec=spec, missing=["model"], notices=notices)
    return ResolvedEstimate(spec=spec, assumed=assumed, notices=notices, estimate_input=job)


def language_input(
    spec: JobSpec, notices: list[JobNotice], strict: bool
) -> tuple[JobSpec, list[Assumed], EstimateInput | None]:
    """(the spec as used, the defaults used, the estimator input) of a language-model job.

    `strict` raises on a value the estimator rejects; otherwise that field is dropped with a
    notice (appended to `notices`) and its default used, and a model the registry does not know
    gives no input (None)."""
    spec = check_language_job(spec, strict)
    if strict and spec.tokens is not None and spec.samples is not None:
        raise InvalidInputError("samples", spec.samples, "give exactly one of tokens or samples")
    for _ in range(len(_ESTIMATOR_FIELDS) + 2):
        assumed: list[Assumed] = []
        try:
            return spec, assumed, _estimate_input(spec, assumed, strict)
        except InvalidInputError as exc:
            name = spec_field(exc.field)
            if strict or name is None or getattr(spec, name) is None:
                raise
            notices.append(invalid_notice(name, getattr(spec, name), exc))
            if name == "model":
                return spec, [], None
            spec = spec.model_copy(update={name: None})
    raise AssertionError("language_input retries exhausted")  # pragma: no cover


def image_model(spec: JobSpec) -> MultimodalModel | None:
    """The image model the job names (a built-in diffusion pipeline or VLM, a diffusers folder
    with model_index.json, a VLM's config.json), if it names one."""
    if not isinstance(spec.model, str):
        return None
    path = Path(spec.model).expanduser()
    if (path / "model_index.json").is_file():
        return read_model_index(path)
    config = path / "config.json" if path.is_dir() else path
    if config.is_file() and config.suffix == ".json":
        return vlm_from_config_file(config)
    return find_multimodal(spec.model)


def check_language_job(spec: JobSpec, strict: bool) -> JobSpec:
    """`spec` for a language model: image fields refused (strict) or cleared; an image
    trainer as its stack refused."""
    check_stack(spec.stack, "language")
    given = [name for name in (*IMAGE_FIELDS, "images", "steps") if getattr(spec, name) is not None]
    if given and strict:
        name = given[0]
        raise InvalidInputError(
            name, getattr(spec, name), "only for diffusion or vision-language models"
        )
    return spec.model_copy(update=dict.fromkeys(given)) if given else spec


def _model(spec: JobSpec) -> ModelArch:
    if isinstance(spec.model, ModelArch):
        return spec.model
    assert spec.model is not None
    return resolve_model(spec.model)


def _estimate_input(spec: JobSpec, assumed: list[Assumed], strict: bool) -> EstimateInput:
    """The estimator input: the model, the method, and every training and plan field the spec
    gives. Open fields are recorded in `assumed` with the default the estimator itself takes for
    them (its defaults are the job's), and are not passed, so the input says which values were
    given. LoRA fields of a job that is not LoRA are an error when `strict`, else left out (a
    conversation keeps a rank from an earlier LoRA question)."""
    method = value_or_default(spec, "method", assumed, None)
    fields: dict[str, Any] = {"model": _model(spec), "method": method}
    for name in _ESTIMATOR_FIELDS:
        if name == "method":
            continue
        given = getattr(spec, name) is not None
        if name in _LORA_ONLY and method not in LORA_METHODS and not (strict and given):
            continue
        if name in _QLORA_ONLY and method != "qlora" and not (strict and given):
            continue
        if not given:
            value_or_default(spec, name, assumed, method)
        else:
            fields[name] = getattr(spec, name)
    context = value_or_default(spec, "cuda_context_gib", assumed, method)
    if spec.cuda_context_gib is not None:
        fields["cuda_context_bytes"] = round(context * GIB)
    return EstimateInput(**fields)
