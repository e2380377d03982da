"""Activation bytes of a diffusion denoiser's training step, per image, at a resolution.

Counted tensor by tensor, as tools/memory/activations.py does for language models, for 16-bit
autocast with fused attention (diffusers' default AttnProcessor2_0 runs
`F.scaled_dot_product_attention`, which keeps q, k, v, the output and a per-row logsumexp, no
s x s scores). Under autocast GroupNorm and LayerNorm run in fp32 (PyTorch's autocast fp32 op
list), so each norm keeps its 16-bit input and hands an fp32 output (4 bytes) to the next op,
whose 16-bit cast (2 bytes) is what the following linear or convolution keeps.

Per element of a block's width x tokens (a UNet's channels x latent pixels), in bytes:
- a UNet ResnetBlock2D: two GroupNorm -> SiLU -> conv steps (16-bit input 2, fp32 norm output
  kept by SiLU 4, SiLU output cast for the conv 2: 8 each) and the residual sum (2): 18;
- a BasicTransformerBlock (UNet attentions): three LayerNorms (2 + 4 + 2 each: 24), self-
  attention q, k, v and output (8), cross-attention q and output (4; its k, v are over the
  77 text tokens), the GEGLU MLP (projection output 8 x width x 2 bytes = 16, GELU of the gate
  4 x 2 = 8, the product 8): 68; the Transformer2DModel around the blocks adds a GroupNorm,
  proj_in and proj_out (2 + 4 + 2 + 2 + 2 = 12);
- a FLUX.1 / SD 3 double-stream block, per token of either stream: the adaLN-modulated
  LayerNorms (2 + 4 + 2, twice: 16), q, k, v (6) and their RMSNorms (fp32 rstd, inputs: 4), the
  attention output (2), the GELU MLP at 4x width (input 8, GELU output 8): 44, plus the gated
  residual products (2 x 2): 48;
- a FLUX.1 single-stream block: the modulated LayerNorm (8), q, k, v and their norms (10), the
  attention output (2), the MLP hidden state and its GELU (8 + 8), their concatenation that
  proj_out reads (2 + 8): 46.
With gradient checkpointing (diffusers' `enable_gradient_checkpointing` wraps every resnet and
transformer block of the UNet and every transformer block of SD 3 and FLUX in
`torch.utils.checkpoint`), only each block's 16-bit input is kept (2 bytes per element), plus
the largest block's full activations while it is recomputed in the backward pass.
"""

from __future__ import annotations

from dataclasses import dataclass

from tools.architectures.diffusion import DiffusionModel
from tools.architectures.diffusion_parts import FluxConfig, MMDiTConfig, UNetConfig

__all__ = ["DenoiserActivations", "denoiser_activations"]

RESNET_BYTES = 18
TRANSFORMER_BLOCK_BYTES = 68
TRANSFORMER_WRAPPER_BYTES = 12
DOUBLE_STREAM_BYTES = 48
SINGLE_STREAM_BYTES = 46
CHECKPOINT_INPUT_BYTES = 2


@dataclass(frozen=True, slots=True)
class DenoiserActivations:
    """Saved activation bytes for one image: all blocks' (no checkpointing), the checkpoints
    (block inputs) and the largest single block (recomputed in backward under checkpointing)."""

    full: int
    checkpoints: int
    largest_block: int

    def kept(self, checkpointing: bool) -> int:
        """Bytes alive at the start of the backward pass, recomputation included."""
        return self.checkpoints + self.largest_block if checkpointing else self.full


def _unet_blocks(cfg: UNetConfig, latent: int) -> list[tuple[int, int]]:
    """(bytes with every tensor kept, elements of the block input) per resnet and transformer
    block of the UNet at a latent side of `latent` pixels."""
    blocks: list[tuple[int, int]] = []
    levels = len(cfg.block_out_channels)

    def add(width: int, level: int, kind: str, layers: int = 1) -> None:
        pixels = max(1, latent >> level) ** 2
        elements = width * pixels
        if kind == "resnet":
            blocks.append((RESNET_BYTES * elements, elements))
            return
        blocks.append((TRANSFORMER_WRAPPER_BYTES * elements, elements))
        blocks.extend((TRANSFORMER_BLOCK_BYTES * elements, elements) for _ in range(layers))

    for i, kind in enumerate(cfg.down_block_types):
        for _ in range(cfg.layers_per_block):
            add(cfg.block_out_channels[i], i, "resnet")
            if kind.startswith("CrossAttn"):
                add(cfg.block_out_channels[i], i, "attn", cfg.transformer_layers_per_block[i])
    last = levels - 1
    add(cfg.block_out_channels[-1], last, "resnet")
    add(cfg.block_out_channels[-1], last, "attn", cfg.transformer_layers_per_block[-1])
    add(cfg.block_out_channels[-1], last, "resnet")
    for i, kind in enumerate(cfg.up_block_types):
        level = last - i
        width = cfg.block_out_channels[level]
        for _ in range(cfg.layers_per_block + 1):
            add(width, level, "resnet")
            if kind.startswith("CrossAttn"):
                add(width, level, "attn", cfg.transformer_layers_per_block[level])
    return blocks


def _transformer_blocks(model: DiffusionModel, resolution: int, text: int) -> list[tuple[int, int]]:
    cfg = model.denoiser
    assert isinstance(cfg, MMDiTConfig | FluxConfig)
    tokens = model.image_tokens(resolution) + text
    elements = tokens * cfg.width
    double = (DOUBLE_STREAM_BYTES * elements, elements)
    if isinstance(cfg, FluxConfig):
        single = (SINGLE_STREAM_BYTES * elements, elements)
        return [double] * cfg.num_layers + [single] * cfg.num_single_layers
    dual = (DOUBLE_STREAM_BYTES * elements + 16 * model.image_tokens(resolution) * cfg.width,
            elements)  # fmt: skip
    return [dual if i in cfg.dual_attention_layers else double for i in range(cfg.num_layers)]


def denoiser_activations(
    model: DiffusionModel, resolution: int, text_tokens: int | None = None
) -> DenoiserActivations:
    """Saved activations of one image's denoiser forward at `resolution` px (16-bit autocast,
    fused attention); the SD 3.5 medium dual-attention blocks add the second attention's
    norm, q, k, v and output over the image tokens (16 bytes per element). `text_tokens`: the
    prompt tokens a transformer denoiser attends to (default: the pipeline's maximum)."""
    if isinstance(model.denoiser, UNetConfig):
        blocks = _unet_blocks(model.denoiser, model.latent_side(resolution))
    else:
        text = model.text_tokens() if text_tokens is None else text_tokens
        blocks = _transformer_blocks(model, resolution, text)
    return DenoiserActivations(
        full=sum(b for b, _ in blocks),
        checkpoints=sum(CHECKPOINT_INPUT_BYTES * e for _, e in blocks),
        largest_block=max(b for b, _ in blocks),
    )
