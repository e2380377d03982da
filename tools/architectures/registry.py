"""Built-in model architectures, forgiving name lookup, and `resolve_model` for any model spec.

A spec is a registry name ("llama 3 70b", "meta-llama/Llama-3.1-70B-Instruct"), a path to a local
Hugging Face config.json (or a folder holding one), or a bare parameter count ("7e9", "70B").
The built-in dimensions live in tools/data/models.yaml; counts are computed by
tools/architectures/architecture.py.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from tools.architectures.architecture import ModelArch
from tools.architectures.hf_config import model_from_hf_config
from tools.architectures.param_guess import model_from_param_count, parse_param_count
from tools.errors import InvalidInputError, UnknownNameError

__all__ = [
    "list_models",
    "lookup_model",
    "model_from_hf_config",
    "model_from_param_count",
    "model_names",
    "normalize_name",
    "resolve_model",
]

# Tokens that name a variant with the same weights' shapes (fine-tunes, repackaged checkpoints).
_VARIANT_TOKENS = frozenset({"instruct", "chat", "hf", "it"})
_SUGGESTIONS = 5
_CLOSE = 60  # rapidfuzz WRatio (0-100) from which a known name is offered as "did you mean"


def normalize_name(name: str) -> str:
    """Matching key: lower case, no org prefix, no variant tokens, no separators.

    "meta-llama/Meta-Llama-3.1-70B-Instruct" -> "llama3170b".
    """
    tail = name.strip().lower().rsplit("/", 1)[-1]
    tokens = [t for t in re.split(r"[\s_\-]+", tail) if t and t not in _VARIANT_TOKENS]
    key = "".join(tokens).replace(".", "")
    return key.removeprefix("meta") if key.startswith("metallama") else key


@cache
def _load_entries() -> tuple[tuple[ModelArch, tuple[str, ...]], ...]:
    """(architecture, aliases) for every built-in entry, in file order."""
    import yaml  # deferred: only needed once the registry is first used

    text = resources.files("tools").joinpath("data/models.yaml").read_text(encoding="utf-8")
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    data: dict[str, Any] = yaml.load(text, Loader=loader)
    entries = []
    for raw in data["models"]:
        fields = dict(raw)
        aliases = tuple(fields.pop("aliases", ()))
        entries.append((ModelArch(**fields), aliases))
    return tuple(entries)


@cache
def _name_index() -> dict[str, ModelArch]:
    """Normalised id, display name and aliases -> entry. Duplicate keys are a data error."""
    index: dict[str, ModelArch] = {}
    for arch, aliases in _load_entries():
        for name in (arch.id, arch.name, *aliases):
            key = normalize_name(name)
            other = index.setdefault(key, arch)
            if other.id != arch.id:
                raise ValueError(f"models.yaml: name {name!r} matches {other.id} and {arch.id}")
    return index


def model_names() -> dict[str, str]:
    """Every name the registry answers to, normalised (`normalize_name`: ids, display names
    and aliases), mapped to its model id."""
    return {key: arch.id for key, arch in _name_index().items()}


def list_models() -> list[ModelArch]:
    """Every built-in architecture, in registry order."""
    return [arch for arch, _ in _load_entries()]


def lookup_model(name: str) -> ModelArch:
    """The built-in entry called `name` (id, display name or alias; case and separators ignored).

    Raises UnknownNameError listing the closest known ids.
    """
    index = _name_index()
    key = normalize_name(name)
    if key in index:
        return index[key]
    _refuse_tower(name)
    from rapidfuzz import fuzz, process  # deferred: only for a name that is not known

    close = process.extract(key, list(index), scorer=fuzz.WRatio, limit=3 * _SUGGESTIONS,
                            score_cutoff=_CLOSE)  # fmt: skip
    suggestions = list(dict.fromkeys(index[k].id for k, _, _ in close))[:_SUGGESTIONS]
    raise UnknownNameError("model", name, suggestions)


def _refuse_tower(name: str) -> None:
    """A vision-encoder tower (ViT, CLIP, SigLIP) is named as such, not read as a misspelt
    language model."""
    from tools.architectures.encoders import find_encoder  # deferred: only for unknown names

    tower = find_encoder(name)
    if tower is not None:
        raise InvalidInputError(
            "model",
            name,
            f"a language model, a diffusion pipeline or a vision-language model: {tower.name}"
            f" ({tower.id}, {tower.total_params():,} parameters) is a vision-encoder tower,"
            " and fine-tuning a tower on its own is not estimated yet",
        )


def _config_path(spec: str) -> Path | None:
    """The config.json that `spec` points at, if it names a file or a folder holding one."""
    path = Path(spec).expanduser()
    if path.is_dir() and (path / "config.json").is_file():
        return path / "config.json"
    if path.is_file():
        return path
    if spec.lower().endswith(".json"):
        raise InvalidInputError("model", spec, "an existing config.json file")
    return None


def resolve_model(spec: str) -> ModelArch:
    """A model from a registry name, a path to a config.json (or its folder), or a bare count."""
    text = spec.strip()
    if not text:
        raise InvalidInputError("model", spec, "a model name, a config.json path or a count")
    config = _config_path(text)
    if config is not None:
        return model_from_hf_config(config)
    if parse_param_count(text, strict=False) is not None:
        return model_from_param_count(text)
    return lookup_model(text)
