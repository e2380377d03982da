"""Built-in diffusion pipelines and vision-language models (tools/data/multimodal.yaml).

`find_multimodal(name)` returns the entry a name, Hugging Face id or alias means (case and
separators ignored, as for language models), or None when the name is not one of them, so the
language-model registry can answer for it. `read_model_index` reads a diffusers folder
(model_index.json + component configs) or a VLM config.json into an entry. The image-model
classes (`diffusion`, `vision`) are imported once an image model is built, not to look a name up
or to see that a config.json is a language model's.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tools.architectures.architecture import ModelArch
from tools.errors import InvalidInputError

if TYPE_CHECKING:
    from tools.architectures.diffusion import DiffusionModel
    from tools.architectures.vision import VisionLanguageModel

    MultimodalModel = DiffusionModel | VisionLanguageModel

__all__ = [
    "MultimodalModel",
    "find_multimodal",
    "list_diffusion",
    "list_vlms",
    "read_model_index",
    "vlm_from_config",
]


def __getattr__(name: str) -> Any:
    """`MultimodalModel`, the union of the two image-model classes, built when first asked for:
    the classes are imported only once an image model is read, so a language model's job (a
    registry name, a config.json) never loads them."""
    if name != "MultimodalModel":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from tools.architectures.diffusion import DiffusionModel
    from tools.architectures.vision import VisionLanguageModel

    return DiffusionModel | VisionLanguageModel


def _key(name: str) -> str:
    from tools.architectures.registry import normalize_name  # deferred: registry imports us

    return normalize_name(name).replace("[", "").replace("]", "")


@cache
def _raw() -> tuple[tuple[str, dict[str, Any]], ...]:
    """(kind, fields) of every entry of multimodal.yaml, in file order, aliases included."""
    import yaml  # deferred: only once the registry is first used

    text = resources.files("tools").joinpath("data/multimodal.yaml").read_text(encoding="utf-8")
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    data: dict[str, Any] = yaml.load(text, Loader=loader)
    return tuple((kind, dict(raw)) for kind in ("diffusion", "vlm") for raw in data[kind])


@cache
def _entries() -> tuple[MultimodalModel, ...]:
    """Every entry as its model, in the order of `_raw`."""
    from tools.architectures.diffusion import DiffusionModel
    from tools.architectures.vision import VisionLanguageModel

    entries: list[MultimodalModel] = []
    for kind, raw in _raw():
        fields = {k: v for k, v in raw.items() if k != "aliases"}
        cls = DiffusionModel if kind == "diffusion" else VisionLanguageModel
        entries.append(cls.model_validate(fields))
    return tuple(entries)


@cache
def _index() -> dict[str, int]:
    """Matching key of every id, name and alias -> the entry's position. Built from the file's
    text, so looking up a language model's name validates no image model."""
    index: dict[str, int] = {}
    raws = _raw()
    for pos, (_, raw) in enumerate(raws):
        for name in (raw["id"], raw["name"], *raw.get("aliases", ())):
            other = index.setdefault(_key(name), pos)
            if raws[other][1]["id"] != raw["id"]:
                raise ValueError(
                    f"multimodal.yaml: {name!r} matches {raws[other][1]['id']} and {raw['id']}"
                )
    return index


def find_multimodal(name: str) -> MultimodalModel | None:
    """The built-in diffusion pipeline or VLM called `name`, or None."""
    pos = _index().get(_key(name))
    return None if pos is None else _entries()[pos]


def list_diffusion() -> list[DiffusionModel]:
    from tools.architectures.diffusion import DiffusionModel

    return [m for m in _entries() if isinstance(m, DiffusionModel)]


def list_vlms() -> list[VisionLanguageModel]:
    from tools.architectures.vision import VisionLanguageModel

    return [m for m in _entries() if isinstance(m, VisionLanguageModel)]


_SUPPORTED = (
    "diffusers pipelines StableDiffusionPipeline, StableDiffusionXLPipeline,"
    " StableDiffusion3Pipeline, FluxPipeline (a folder with model_index.json);"
    " VLM configs LlavaForConditionalGeneration, Qwen2VLForConditionalGeneration,"
    " Qwen2_5_VLForConditionalGeneration"
)
_PIPELINE_FAMILY = {
    "StableDiffusionPipeline": "sd1",
    "StableDiffusionXLPipeline": "sdxl",
    "StableDiffusion3Pipeline": "sd3",
    "FluxPipeline": "flux",
}


def _json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise InvalidInputError("model", str(path), f"a readable JSON config ({exc})") from None
    if not isinstance(data, dict):
        raise InvalidInputError("model", str(path), "a JSON object")
    return data


def read_model_index(folder: Path) -> DiffusionModel:
    """A diffusers pipeline folder read into a DiffusionModel: model_index.json names the
    pipeline; the denoiser, VAE and text-encoder configs come from their sub-folders."""
    index = _json(folder / "model_index.json")
    pipeline = str(index.get("_class_name", ""))
    family = _PIPELINE_FAMILY.get(pipeline)
    if family is None:
        raise InvalidInputError("model", pipeline or str(folder), f"one of: {_SUPPORTED}")
    base = next(m for m in list_diffusion() if m.family == family)
    denoiser_dir = "unet" if family in ("sd1", "sdxl") else "transformer"
    denoiser = _fields(_json(folder / denoiser_dir / "config.json"), base.denoiser)
    vae = _fields(_json(folder / "vae" / "config.json"), base.vae)
    encoders = []
    for enc in base.text_encoders:
        path = folder / enc.folder / "config.json"
        if path.is_file():
            enc = enc.model_copy(update={"config": _fields(_json(path), enc.config)})
        encoders.append(enc)
    return base.model_copy(
        update={
            "id": str(folder),
            "name": f"{base.name} layout ({folder.name})",
            "denoiser": denoiser,
            "vae": vae,
            "text_encoders": tuple(encoders),
            "source": str(folder),
        }
    )


def _fields(config: dict[str, Any], base: Any) -> Any:
    """The config's values for the fields of `base`'s class, `base`'s values for the rest
    (lists become tuples; SD 3's qk_norm 'rms_norm' is on; an int
    transformer_layers_per_block applies to every level)."""
    cls = type(base)
    values: dict[str, Any] = base.model_dump()
    for name in cls.model_fields:
        if name not in config or name == "kind":
            continue
        value = config[name]
        if name == "qk_norm":
            value = value is not None
        if name == "transformer_layers_per_block" and isinstance(value, int):
            value = [value] * len(config["block_out_channels"])
        values[name] = tuple(value) if isinstance(value, list) else value
    if cls.__name__ == "UNetConfig" and "transformer_layers_per_block" not in config:
        values["transformer_layers_per_block"] = (1,) * len(values["block_out_channels"])
    try:
        return cls.model_validate(values)
    except ValueError as exc:
        raise InvalidInputError("model", cls.__name__, f"a complete config ({exc})") from None


def vlm_from_config(
    config: dict[str, Any], language: ModelArch, source: str
) -> VisionLanguageModel:
    """A VLM config.json (its `architectures`) read into a VisionLanguageModel over `language`,
    the text model read from the same file."""
    arch = (config.get("architectures") or [""])[0]
    family = {
        "LlavaForConditionalGeneration": "llava",
        "Qwen2VLForConditionalGeneration": "qwen2-vl",
        "Qwen2_5_VLForConditionalGeneration": "qwen2.5-vl",
    }.get(arch)
    if family is None:
        raise InvalidInputError("model", arch or source, f"one of: {_SUPPORTED}")
    base = next(m for m in list_vlms() if m.family == family)
    vision_cfg = dict(config.get("vision_config") or {})
    if family == "qwen2-vl" and "mlp_ratio" in vision_cfg:
        vision_cfg["intermediate_size"] = int(vision_cfg["embed_dim"] * vision_cfg["mlp_ratio"])
        vision_cfg["out_hidden_size"] = vision_cfg.get("hidden_size", language.hidden_size)
    if family == "qwen2.5-vl":
        vision_cfg["embed_dim"] = vision_cfg.get("hidden_size", base.vision.width)
    vision = _fields(vision_cfg, base.vision) if vision_cfg else base.vision
    projector = base.projector
    if projector is not None:
        projector = projector.model_copy(
            update={"d_in": vision.width, "d_out": language.hidden_size}
        )
    return base.model_copy(
        update={
            "id": source, "name": f"{base.name} layout", "vision": vision,
            "projector": projector, "language": language, "source": source,
        }
    )  # fmt: skip


_VLM_ARCHITECTURES = (
    "LlavaForConditionalGeneration",
    "Qwen2VLForConditionalGeneration",
    "Qwen2_5_VLForConditionalGeneration",
)


def vlm_from_config_file(path: Path) -> VisionLanguageModel | None:
    """A VLM config.json read into a VisionLanguageModel; None when its `architectures` is not
    a VLM (the language-model reader then reads it). The text model's fields come from
    `text_config` (LLaVA) or the top level (Qwen2-VL), over the built-in entry's values for the
    keys the file leaves to the library defaults."""
    from tools.architectures.hf_config import _load_json, _read_decoder, to_hf_config

    config = _load_json(path)
    arch = (config.get("architectures") or [""])[0]
    if arch not in _VLM_ARCHITECTURES:
        return None
    base = vlm_from_config(config, list_vlms()[0].language, str(path))  # the family's entry
    family = next(m for m in list_vlms() if m.family == base.family)
    given = config.get("text_config") or {k: v for k, v in config.items() if k != "vision_config"}
    text = {**to_hf_config(family.language), **given, "model_type": family.language.family}
    name = f"{path.parent.name or path.stem} text model"
    language = ModelArch(
        id=name,
        name=name,
        source=f"local config.json: {path}",
        **_read_decoder(text, text["model_type"]),
    )
    return vlm_from_config(config, language, str(path))
