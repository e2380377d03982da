"""Vision-encoder towers on their own (ViT, CLIP's and SigLIP's image towers), with exact counts.

Counts follow the transformers classes the published checkpoints load into:
- `VitEncoderConfig(kind="vit")`: `ViTModel(add_pooling_layer=False)`: class token, learned
  positions (patches + 1), patch convolution with bias, post-norm-free pre-LN blocks with biased
  q, k, v, o and MLP, a final LayerNorm (the classifier head of a fine-tune is not counted);
- `VitEncoderConfig(kind="siglip")`: `SiglipVisionModel`: no class token, positions per patch,
  the same blocks, a post LayerNorm and the attention-pooling head (a probe token, one
  multi-head attention, LayerNorm, MLP);
- CLIP's image tower: `ClipVisionConfig` (tools/architectures/vision.py, `CLIPVisionModel`).
`find_encoder(name)` is the built-in tower a name means (tools/data/multimodal.yaml `encoders`),
or None. A tower's fine-tune is not a job the estimator models yet: the registry names what is
supported instead of reading the name as a language model.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from tools.architectures.diffusion_parts import linear
from tools.architectures.vision import ClipVisionConfig

__all__ = ["VisionEncoder", "VitEncoderConfig", "find_encoder", "list_encoders"]


class _Config(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class VitEncoderConfig(_Config):
    """transformers ViTConfig / SiglipVisionConfig fields that decide the tower's size."""

    kind: Literal["vit", "siglip"]
    hidden_size: int = Field(gt=0)
    intermediate_size: int = Field(gt=0)
    num_hidden_layers: int = Field(gt=0)
    num_attention_heads: int = Field(gt=0)
    patch_size: int = Field(gt=0)
    image_size: int = Field(gt=0)

    def _mlp(self) -> int:
        return linear(self.hidden_size, self.intermediate_size) + linear(
            self.intermediate_size, self.hidden_size
        )

    def num_params(self) -> int:
        h = self.hidden_size
        patches = (self.image_size // self.patch_size) ** 2
        layer = 4 * linear(h, h) + self._mlp() + 2 * 2 * h
        embeddings = 3 * self.patch_size**2 * h + h  # patch convolution with bias
        if self.kind == "vit":
            return embeddings + h + (patches + 1) * h + self.num_hidden_layers * layer + 2 * h
        head = h + 3 * h * h + 3 * h + linear(h, h) + 2 * h + self._mlp()  # attention pooling
        return embeddings + patches * h + self.num_hidden_layers * layer + 2 * h + head


class VisionEncoder(_Config):
    """A vision-encoder tower as published."""

    id: str
    name: str
    family: Literal["vit", "clip", "siglip"]
    config: VitEncoderConfig | ClipVisionConfig = Field(discriminator="kind")
    source: str = Field(description="the published config.json")

    def total_params(self) -> int:
        return self.config.num_params()


def _key(name: str) -> str:
    """Lower case without separators; '/' is one too ('ViT-B/16' -> 'vitb16')."""
    return re.sub(r"[\s_\-/.]+", "", name.strip().lower())


@cache
def _index() -> dict[str, VisionEncoder]:
    import yaml  # deferred: only once a tower is first looked up

    text = resources.files("tools").joinpath("data/multimodal.yaml").read_text(encoding="utf-8")
    data: dict[str, Any] = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    index: dict[str, VisionEncoder] = {}
    for raw in data["encoders"]:
        fields = dict(raw)
        aliases = fields.pop("aliases", ())
        tower = VisionEncoder.model_validate(fields)
        for name in (tower.id, tower.id.split("/", 1)[-1], tower.name, *aliases):
            other = index.setdefault(_key(name), tower)
            if other.id != tower.id:
                raise ValueError(f"multimodal.yaml: {name!r} matches {other.id} and {tower.id}")
    return index


def find_encoder(name: str) -> VisionEncoder | None:
    """The built-in vision tower called `name`, or None."""
    return _index().get(_key(name))


def list_encoders() -> list[VisionEncoder]:
    return list({t.id: t for t in _index().values()}.values())
