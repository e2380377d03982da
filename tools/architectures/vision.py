"""Vision-language models as three parts: a vision tower, a projector and a language model.

Counts follow the transformers implementations the published checkpoints load into:
- `ClipVisionConfig`: `CLIPVisionModel` (LLaVA 1.5's CLIP ViT-L/14 at 336 px: class token,
  patch convolution without bias, learned positions, pre- and post-LayerNorm, pre-norm blocks);
- `QwenVisionConfig`: Qwen2-VL's and Qwen2.5-VL's vision transformer (3-D patch convolution over
  2 frames x 14 x 14 pixels, fused qkv, LayerNorm + GELU MLP for Qwen2-VL, RMSNorm + SwiGLU for
  Qwen2.5-VL) and its patch merger (2 x 2 patches -> one language-model token);
- `MllamaVisionConfig`: Llama 3.2 Vision's `MllamaVisionModel` (560 px tiles of 14 x 14
  patches, a 32-layer local and an 8-layer gated global encoder, gated position and tile
  embeddings, 5 intermediate layers concatenated with the last into a 7680-wide output);
- `CrossAttentionExtras`: what Llama 3.2 Vision's text model has beyond a Llama decoder of as
  many layers (q/k RMSNorms and two tanh gates per cross-attention layer, 8 extra token rows);
- `MlpProjector`: LLaVA's `mlp2x_gelu` (two linear layers with a GELU between); Llama 3.2
  Vision's projector is one linear layer (`LinearProjector`).
Image tokens per image: LLaVA 1.5 one per 14 x 14 patch (576 at 336 px; the class token is
dropped with `vision_feature_select_strategy="default"`); Qwen2-VL resizes each image to a
multiple of 28 px and gives one token per 28 x 28 pixels (pixels / (14 x 14 x 4)); Llama 3.2
Vision puts no image token in the language model's sequence: its cross-attention layers attend
to 1601 vision tokens per 560 px tile (1 tile up to 560 px, a square image above it 2 x 2).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from tools.architectures.architecture import ModelArch
from tools.architectures.diffusion_parts import linear

__all__ = [
    "ClipVisionConfig",
    "CrossAttentionExtras",
    "LinearProjector",
    "MllamaVisionConfig",
    "MlpProjector",
    "QwenVisionConfig",
    "VisionLanguageModel",
]


class _Config(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ClipVisionConfig(_Config):
    """transformers CLIPVisionConfig fields that decide CLIPVisionModel's size."""

    kind: Literal["clip"] = "clip"
    hidden_size: int = Field(gt=0)
    intermediate_size: int = Field(gt=0)
    num_hidden_layers: int = Field(gt=0)
    num_attention_heads: int = Field(gt=0)
    patch_size: int = Field(gt=0)
    image_size: int = Field(gt=0, description="pixels per side the tower is built for")

    @property
    def width(self) -> int:
        return self.hidden_size

    @property
    def mlp_width(self) -> int:
        return self.intermediate_size

    @property
    def layers(self) -> int:
        return self.num_hidden_layers

    def num_params(self) -> int:
        h, p = self.hidden_size, self.patch_size
        positions = (self.image_size // p) ** 2 + 1
        embeddings = h + 3 * h * p * p + positions * h
        layer = 4 * h + 4 * linear(h, h) + linear(h, self.intermediate_size)
        layer += linear(self.intermediate_size, h)
        return embeddings + 2 * 2 * h + self.num_hidden_layers * layer

    def image_tokens(self, resolution: int) -> int:
        """Tokens one image adds: the tower resizes every image to its own size."""
        return (self.image_size // self.patch_size) ** 2


class QwenVisionConfig(_Config):
    """Qwen2-VL / Qwen2.5-VL vision_config fields that decide the tower's and merger's size."""

    kind: Literal["qwen2-vl", "qwen2.5-vl"]
    embed_dim: int = Field(gt=0, description="Qwen2-VL embed_dim; Qwen2.5-VL hidden_size")
    depth: int = Field(gt=0)
    num_heads: int = Field(gt=0)
    intermediate_size: int = Field(gt=0, description="MLP width (Qwen2-VL: embed_dim x mlp_ratio)")
    patch_size: int = Field(14, gt=0)
    temporal_patch_size: int = Field(2, gt=0)
    spatial_merge_size: int = Field(2, gt=0)
    out_hidden_size: int = Field(gt=0, description="the language model's hidden size")

    @property
    def width(self) -> int:
        return self.embed_dim

    @property
    def mlp_width(self) -> int:
        return self.intermediate_size

    @property
    def layers(self) -> int:
        return self.depth

    def num_params(self) -> int:
        d, m = self.embed_dim, self.intermediate_size
        gated = self.kind == "qwen2.5-vl"
        norm = d if gated else 2 * d  # RMSNorm weight / LayerNorm weight + bias
        patch = 3 * self.temporal_patch_size * self.patch_size**2 * d
        mlp = 2 * linear(d, m) + linear(m, d) if gated else linear(d, m) + linear(m, d)
        block = 2 * norm + linear(d, 3 * d) + linear(d, d) + mlp
        merged = d * self.spatial_merge_size**2
        merger = norm + linear(merged, merged) + linear(merged, self.out_hidden_size)
        return patch + self.depth * block + merger

    def patches(self, resolution: int) -> int:
        """Vision-transformer tokens of one square image of `resolution` px (rounded to a
        multiple of 28 px, as Qwen2-VL's processor resizes; 2 copies of a still frame make one
        temporal patch)."""
        unit = self.patch_size * self.spatial_merge_size
        side = max(unit, round(resolution / unit) * unit)
        return (side // self.patch_size) ** 2

    def image_tokens(self, resolution: int) -> int:
        """Language-model tokens of one image: its patches merged 2 x 2."""
        return self.patches(resolution) // self.spatial_merge_size**2


class MllamaVisionConfig(_Config):
    """transformers MllamaVisionConfig fields that decide MllamaVisionModel's size."""

    kind: Literal["mllama"] = "mllama"
    hidden_size: int = Field(gt=0)
    intermediate_size: int = Field(gt=0)
    num_hidden_layers: int = Field(gt=0, description="local encoder layers")
    num_global_layers: int = Field(gt=0, description="gated global encoder layers")
    patch_size: int = Field(gt=0)
    image_size: int = Field(gt=0, description="pixels per tile side")
    max_num_tiles: int = Field(gt=0)
    aspect_ratios: int = Field(gt=0, description="len(supported_aspect_ratios)")
    vision_output_dim: int = Field(gt=0)

    @property
    def width(self) -> int:
        return self.hidden_size

    @property
    def mlp_width(self) -> int:
        return self.intermediate_size

    @property
    def layers(self) -> int:
        return self.num_hidden_layers + self.num_global_layers

    @property
    def tile_tokens(self) -> int:
        """Patches of one tile plus its class token (1601 at 560 px)."""
        return (self.image_size // self.patch_size) ** 2 + 1

    def num_params(self) -> int:
        h, tiles, rows = self.hidden_size, self.max_num_tiles, self.aspect_ratios + 1
        layer = 4 * h * h + linear(h, self.intermediate_size) + linear(self.intermediate_size, h)
        layer += 2 * 2 * h  # two LayerNorms
        embeddings = 3 * h * self.patch_size**2 + h  # patch convolution (no bias), class token
        embeddings += 1 + self.tile_tokens * h + rows * tiles * self.tile_tokens * h
        embeddings += 2 * (rows * tiles * h + 1)  # pre- and post-tile embeddings, gated
        encoders = self.layers * layer + 2 * self.num_global_layers  # attention / MLP gates
        return embeddings + 2 * 2 * h + encoders

    def tiles(self, resolution: int) -> int:
        """Tiles of a square image: one up to a tile's size, else 2 x 2 (the largest square
        layout of 4 tiles)."""
        return 1 if resolution <= self.image_size else min(4, self.max_num_tiles)

    def image_tokens(self, resolution: int) -> int:
        """Language-model sequence tokens of one image: none (cross-attention)."""
        return 0


class CrossAttentionExtras(_Config):
    """Llama 3.2 Vision's text model beyond a Llama decoder with as many layers."""

    layers: int = Field(gt=0, description="len(cross_attention_layers)")
    head_dim: int = Field(gt=0)
    kv_width: int = Field(gt=0, description="num_key_value_heads x head_dim")
    extra_tokens: int = Field(8, ge=0, description="embedding rows past vocab_size")
    hidden_size: int = Field(gt=0)

    def num_params(self) -> int:
        return self.layers * (2 * self.head_dim + 2) + self.extra_tokens * self.hidden_size


class LinearProjector(_Config):
    """Llama 3.2 Vision's multi_modal_projector: one linear layer with bias."""

    kind: Literal["linear"] = "linear"
    d_in: int = Field(gt=0)
    d_out: int = Field(gt=0)

    def num_params(self) -> int:
        return linear(self.d_in, self.d_out)


class MlpProjector(_Config):
    """LLaVA's mlp2x_gelu projector: vision width -> text width -> text width."""

    kind: Literal["mlp2x_gelu"] = "mlp2x_gelu"
    d_in: int = Field(gt=0)
    d_out: int = Field(gt=0)

    def num_params(self) -> int:
        return linear(self.d_in, self.d_out) + linear(self.d_out, self.d_out)


class VisionLanguageModel(_Config):
    """A VLM: vision tower (+ projector, for LLaVA) feeding image tokens to a language model."""

    id: str
    name: str
    family: Literal["llava", "qwen2-vl", "qwen2.5-vl", "mllama"]
    vision: ClipVisionConfig | QwenVisionConfig | MllamaVisionConfig = Field(discriminator="kind")
    projector: MlpProjector | LinearProjector | None = Field(
        None, description="LLaVA's / Llama 3.2 Vision's projector; Qwen's merger is in the tower"
    )
    language: ModelArch
    cross_attention: CrossAttentionExtras | None = Field(
        None,
        description="Llama 3.2 Vision: the cross-attention layers' parameters beyond"
        " `language` (a Llama decoder with as many layers)",
    )
    default_resolution: int = Field(
        gt=0, description="image side in px assumed when a job gives none (LLaVA: its tower's)"
    )
    source: str = Field(description="the published config.json")

    def vision_params(self) -> int:
        """The vision tower, Qwen's merger included."""
        return self.vision.num_params()

    def projector_params(self) -> int:
        return self.projector.num_params() if self.projector else 0

    def cross_attention_params(self) -> int:
        return self.cross_attention.num_params() if self.cross_attention else 0

    def total_params(self) -> int:
        language = self.language.total_params() + self.cross_attention_params()
        return self.vision_params() + self.projector_params() + language

    def image_tokens(self, resolution: int | None = None) -> int:
        """Language-model tokens one image adds at `resolution` px (the model's default)."""
        return self.vision.image_tokens(resolution or self.default_resolution)

    def vision_tokens(self, resolution: int | None = None) -> int:
        """Tokens the vision tower itself runs over for one image (CLIP: patches + class)."""
        side = resolution or self.default_resolution
        if isinstance(self.vision, QwenVisionConfig):
            return self.vision.patches(side)
        if isinstance(self.vision, MllamaVisionConfig):
            return self.vision.tiles(side) * self.vision.tile_tokens
        return self.vision.image_tokens(side) + 1
