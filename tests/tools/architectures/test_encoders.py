"""Vision-encoder towers: exact counts (as transformers builds them), lookups, and the clear
refusal of a tower as a job's model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tools.architectures.encoders import VitEncoderConfig, find_encoder, list_encoders
from tools.architectures.registry import resolve_model
from tools.architectures.vision import ClipVisionConfig
from tools.errors import InvalidInputError

# (name, params) as ViTModel(add_pooling_layer=False), CLIPVisionModel, SiglipVisionModel count.
GOLDEN = [
    ("ViT-B/16", 85_798_656),
    ("vit-l/16", 303_301_632),
    ("vit h/14", 630_764_800),
    ("clip vit-l/14", 303_179_776),
    ("siglip so400m", 428_225_600),
]


@pytest.mark.parametrize(("name", "params"), GOLDEN)
def test_tower_counts_exact(name: str, params: int) -> None:
    tower = find_encoder(name)
    assert tower is not None and tower.total_params() == params
    assert tower.source.startswith("https://huggingface.co/") and tower.source.endswith(".json")


def test_lookups_keep_the_patch_size_apart() -> None:
    assert len(list_encoders()) == 5
    b16, l16 = find_encoder("vit-b/16"), find_encoder("ViT-L/16")
    assert b16 is not None and l16 is not None and b16.id != l16.id
    assert find_encoder("google/siglip-so400m-patch14-384") is not None
    assert find_encoder("llama 3.1 8b") is None


def test_a_tower_is_refused_as_a_job_model_with_what_is_supported() -> None:
    with pytest.raises(InvalidInputError, match=r"vision-encoder tower.*not estimated yet"):
        resolve_model("vit-b/16")
    with pytest.raises(InvalidInputError, match="85,798,656 parameters"):
        resolve_model("ViT-B/16")


def test_a_vit_config_file_names_the_supported_types(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"architectures": ["ViTModel"], "model_type": "vit"}))
    with pytest.raises(InvalidInputError, match="supported types") as info:
        resolve_model(str(path))
    assert "vocab_size" not in str(info.value)


def _count(module: Any) -> int:
    return sum(p.numel() for p in module.parameters())


@pytest.mark.slow
def test_counts_match_transformers() -> None:
    torch = pytest.importorskip("torch")
    tf = pytest.importorskip("transformers")
    for tower in list_encoders():
        cfg = tower.config
        fields = cfg.model_dump(exclude={"kind"})
        with torch.device("meta"):
            if isinstance(cfg, ClipVisionConfig):
                built = tf.CLIPVisionModel(tf.CLIPVisionConfig(**fields))
            elif isinstance(cfg, VitEncoderConfig) and cfg.kind == "siglip":
                built = tf.SiglipVisionModel(tf.SiglipVisionConfig(**fields))
            else:
                built = tf.ViTModel(tf.ViTConfig(**fields), add_pooling_layer=False)
        assert _count(built) == tower.total_params(), tower.name
