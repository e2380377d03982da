"""Jobs on image models (diffusion pipelines, vision-language models) for `tools.advice`.

`image_model(spec)` is the built-in diffusion pipeline or VLM a job names (or a diffusers folder
with model_index.json), else None; `estimate_image_spec` resolves such a job's open fields
through the job defaults (recording each one used) and estimates it;
`check_language_job` refuses image fields on a language model's job (or drops them when not
strict) and says that ranking image models is not supported yet.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tools.architectures.diffusion import DiffusionModel
from tools.architectures.multimodal import (
    MultimodalModel,
    find_multimodal,
    read_model_index,
    vlm_from_config_file,
)
from tools.errors import InvalidInputError
from tools.job import JobSpec
from tools.job.spec import FIELD_GROUPS, IMAGE_FIELDS
from tools.memory.images.jobs import DIFFUSION_FIELDS, VLM_FIELDS, estimate_image_job
from tools.memory.images.stacks import check_stack

__all__ = ["check_language_job", "estimate_image_spec", "image_model"]

ValueOf = Callable[[str, Any], Any]
_LANGUAGE_SHOWN = (
    "method", "precision", "optimizer", "lora_rank", "micro_batch_size", "seq_len",
    "gradient_checkpointing",
)  # fmt: skip
_LORA_FIELDS = ("lora_rank", "lora_alpha", "lora_targets", "lora_dropout")
# Diffusion fields an image trainer's profile fills when the job leaves them open.
_STACK_FILLED = ("lora_rank", "train_text_encoder", "cache_latents", "cache_text_embeddings")


def image_model(spec: JobSpec) -> MultimodalModel | None:
    """The image model the job names, if it names one."""
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
    """`spec` for a language model: image fields refused (strict) or cleared; an image model is
    refused with what works for it (ranking them is not supported yet)."""
    if image_model(spec) is not None:
        raise InvalidInputError(
            "model",
            spec.model,
            "a language model for a ranking: diffusion and vision-language models are"
            " estimated (gpu-advisor estimate), not ranked yet",
        )
    check_stack(spec.stack, "language")
    given = [name for name in (*IMAGE_FIELDS, "images", "steps") if getattr(spec, name) is not None]
    if given and strict:
        name = given[0]
        raise InvalidInputError(
            name, getattr(spec, name), "only for diffusion or vision-language models"
        )
    return spec.model_copy(update=dict.fromkeys(given)) if given else spec


def estimate_image_spec(spec: JobSpec, model: MultimodalModel, value_of: ValueOf, side: int) -> Any:
    """The MemoryEstimate of `spec` on `model` at `side` px; every default used is recorded by
    `value_of`."""
    method = value_of("method", None)
    if isinstance(model, DiffusionModel):
        check_stack(spec.stack, "diffusion")
        names = [n for n in DIFFUSION_FIELDS if n not in ("method", "resolution")]
        open_to_stack = spec.stack is not None
        values = {
            name: None
            if open_to_stack and name in _STACK_FILLED and getattr(spec, name) is None
            else value_of(name, method)
            for name in names
        }
        values |= {"method": method, "resolution": side, "stack": spec.stack}
        return estimate_image_job(model, values)
    check_stack(spec.stack, "language")
    values = {n: value_of(n, method) for n in VLM_FIELDS if n != "resolution"}
    language: dict[str, Any] = {"method": method}
    for name in _LANGUAGE_SHOWN[1:]:
        if name in _LORA_FIELDS and method not in ("lora", "qlora"):
            continue
        language[name] = value_of(name, method)
    for name in FIELD_GROUPS["training"] + FIELD_GROUPS["plan"]:
        if name in IMAGE_FIELDS or name in language or name == "cuda_context_gib":
            continue
        if getattr(spec, name) is not None:
            language[name] = getattr(spec, name)
    return estimate_image_job(model, {**values, "resolution": side}, language)
