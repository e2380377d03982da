"""Latent diffusion models as parts: a denoiser, its text encoders and a VAE.

A `DiffusionModel` holds each part's published config (tools/architectures/diffusion_parts.py
counts them) and the facts the memory and time models need: how far the VAE shrinks an image
(8 x per side for every model here), how many latent channels, how the denoiser turns latents
into tokens (a UNet works on the latent grid; SD 3's MMDiT and FLUX.1 patch 2 x 2 latents into
one token, so 16 px per token side), and how many text tokens the denoiser attends to.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from tools.architectures.diffusion_parts import (
    ClipTextConfig,
    FluxConfig,
    MMDiTConfig,
    T5EncoderConfig,
    UNetConfig,
    VaeConfig,
)

__all__ = ["Component", "DiffusionModel", "TextEncoder"]

Role = Literal["denoiser", "text_encoder", "vae"]


class TextEncoder(BaseModel):
    """One text encoder of a pipeline, by its folder name in the diffusers repository."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(description="'CLIP-L', 'OpenCLIP-bigG' or 'T5-XXL'")
    folder: str = Field(description="text_encoder, text_encoder_2 or text_encoder_3")
    config: ClipTextConfig | T5EncoderConfig
    max_tokens: int = Field(gt=0, description="prompt tokens the pipeline encodes (77, 256, 512)")

    @property
    def width(self) -> int:
        cfg = self.config
        return cfg.hidden_size if isinstance(cfg, ClipTextConfig) else cfg.d_model

    @property
    def layers(self) -> int:
        cfg = self.config
        return cfg.num_hidden_layers if isinstance(cfg, ClipTextConfig) else cfg.num_layers

    @property
    def mlp_width(self) -> int:
        cfg = self.config
        return cfg.intermediate_size if isinstance(cfg, ClipTextConfig) else cfg.d_ff


class Component(BaseModel):
    """One part of a pipeline and its exact parameter count."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    role: Role
    name: str
    params: int = Field(ge=0)


class DiffusionModel(BaseModel):
    """A text-to-image latent diffusion pipeline as published in diffusers format."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(
        description="Hugging Face repository, e.g. 'stabilityai/stable-diffusion-xl-base-1.0'"
    )
    name: str
    family: Literal["sd1", "sd2", "sdxl", "sd3", "flux"]
    denoiser: UNetConfig | MMDiTConfig | FluxConfig
    text_encoders: tuple[TextEncoder, ...]
    vae: VaeConfig
    vae_scale: int = Field(8, gt=0, description="pixels per latent side (2 ** (VAE levels - 1))")
    default_resolution: int = Field(gt=0, description="the resolution it was trained at, px")
    source: str = Field(description="the repository whose config.json files the parts copy")

    @property
    def latent_channels(self) -> int:
        return self.vae.latent_channels

    @property
    def token_patch(self) -> int:
        """Latent pixels per token side: 1 for a UNet, 2 for SD 3 / FLUX.1 (FLUX packs 2 x 2
        latents into its 64 input channels with patch_size 1)."""
        if isinstance(self.denoiser, MMDiTConfig):
            return self.denoiser.patch_size
        return 2 if isinstance(self.denoiser, FluxConfig) else 1

    @property
    def denoiser_kind(self) -> Literal["unet", "mmdit", "flux"]:
        if isinstance(self.denoiser, UNetConfig):
            return "unet"
        return "mmdit" if isinstance(self.denoiser, MMDiTConfig) else "flux"

    def latent_side(self, resolution: int) -> int:
        """Latent pixels per side of a square image of `resolution` px."""
        return max(1, resolution // self.vae_scale)

    def image_tokens(self, resolution: int) -> int:
        """Tokens a transformer denoiser runs over for one image (a UNet's top-level grid)."""
        side = self.latent_side(resolution) // self.token_patch
        return max(1, side) ** 2

    def text_tokens(self) -> int:
        """Prompt tokens the denoiser attends to: SD 3 joins CLIP's 77 and T5's tokens; FLUX
        attends to T5's; a UNet to CLIP's 77."""
        if self.family == "sd3":
            return sum(e.max_tokens for e in self.text_encoders)
        longest = max(e.max_tokens for e in self.text_encoders)
        return longest if self.family == "flux" else 77

    def components(self) -> list[Component]:
        parts = [
            Component(role="denoiser", name=self.denoiser_kind, params=self.denoiser.num_params())
        ]
        parts += [
            Component(role="text_encoder", name=e.name, params=e.config.num_params())
            for e in self.text_encoders
        ]
        parts.append(Component(role="vae", name="VAE", params=self.vae.num_params()))
        return parts

    def denoiser_params(self) -> int:
        return self.denoiser.num_params()

    def text_encoder_params(self) -> int:
        return sum(e.config.num_params() for e in self.text_encoders)

    def total_params(self) -> int:
        return sum(c.params for c in self.components())
