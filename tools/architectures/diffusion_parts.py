"""Parameter counts of diffusion-model components, computed from their published configs.

Each config class holds the fields of one component's config.json (diffusers' `unet/`,
`transformer/`, `vae/` folders; transformers' `text_encoder*/`) that decide its shapes, with the
same names, and counts the parameters the way the library's modules are built:
- `UNetConfig`: diffusers `UNet2DConditionModel` (SD 1.x / 2.x, SDXL) with ResnetBlock2D,
  Transformer2DModel (BasicTransformerBlock: self-attention, cross-attention, GEGLU MLP), the
  timestep embedding and SDXL's `text_time` added embedding;
- `VaeConfig`: diffusers `AutoencoderKL` (encoder, decoder, quant convs);
- `MMDiTConfig`: diffusers `SD3Transformer2DModel` (SD 3 / 3.5: joint blocks, SD 3.5 medium's
  dual-attention blocks, RMS q/k norms);
- `FluxConfig`: diffusers `FluxTransformer2DModel` (FLUX.1: double- and single-stream blocks);
- `ClipTextConfig`: transformers `CLIPTextModel(WithProjection)`;
- `T5EncoderConfig`: transformers `T5EncoderModel` (gated-GELU T5 v1.1).
Buffers (SD3's fixed sin-cos position table) are not parameters and are not counted.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "ClipTextConfig",
    "FluxConfig",
    "MMDiTConfig",
    "T5EncoderConfig",
    "UNetConfig",
    "VaeConfig",
    "conv",
    "linear",
]


def linear(d_in: int, d_out: int, bias: bool = True) -> int:
    """nn.Linear parameters."""
    return d_in * d_out + (d_out if bias else 0)


def conv(c_in: int, c_out: int, kernel: int, bias: bool = True) -> int:
    """nn.Conv2d parameters (square kernel)."""
    return c_in * c_out * kernel * kernel + (c_out if bias else 0)


def _norm(width: int) -> int:
    """GroupNorm / LayerNorm with weight and bias."""
    return 2 * width


class _Config(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class UNetConfig(_Config):
    """diffusers UNet2DConditionModel config fields that decide its parameters."""

    in_channels: int = Field(gt=0)
    out_channels: int = Field(gt=0)
    block_out_channels: tuple[int, ...]
    layers_per_block: int = Field(gt=0)
    down_block_types: tuple[str, ...]
    up_block_types: tuple[str, ...]
    transformer_layers_per_block: tuple[int, ...] = Field(
        description="transformer blocks per attention at each level (an int in the config: 1)"
    )
    cross_attention_dim: int = Field(gt=0, description="width of the text embeddings")
    projection_class_embeddings_input_dim: int = Field(
        0, ge=0, description="SDXL text_time embedding input (pooled text + 6 x 256); 0: none"
    )

    def _resnet(self, c_in: int, c_out: int) -> int:
        temb = 4 * self.block_out_channels[0]
        shortcut = conv(c_in, c_out, 1) if c_in != c_out else 0
        return (
            _norm(c_in) + conv(c_in, c_out, 3) + linear(temb, c_out) + _norm(c_out)
            + conv(c_out, c_out, 3) + shortcut
        )  # fmt: skip

    def _transformer(self, width: int, layers: int) -> int:
        """Transformer2DModel: norm, proj_in, `layers` blocks, proj_out (inner width = width)."""
        c, x = width, self.cross_attention_dim
        block = (
            3 * _norm(c)
            + 3 * c * c + linear(c, c)  # attn1: q, k, v without bias; to_out
            + c * c + 2 * x * c + linear(c, c)  # attn2: q from the image, k, v from the text
            + linear(c, 8 * c) + linear(4 * c, c)  # GEGLU MLP
        )  # fmt: skip
        return _norm(c) + 2 * linear(c, c) + layers * block

    def _down(self) -> int:
        total, c_prev, last = 0, self.block_out_channels[0], len(self.block_out_channels) - 1
        for i, kind in enumerate(self.down_block_types):
            c = self.block_out_channels[i]
            for j in range(self.layers_per_block):
                total += self._resnet(c_prev if j == 0 else c, c)
                if kind.startswith("CrossAttn"):
                    total += self._transformer(c, self.transformer_layers_per_block[i])
            total += conv(c, c, 3) if i < last else 0
            c_prev = c
        return total

    def _up(self) -> int:
        chans = self.block_out_channels[::-1]
        layers = self.transformer_layers_per_block[::-1]
        total, c_prev, last = 0, chans[0], len(chans) - 1
        for i, kind in enumerate(self.up_block_types):
            c, c_skip_in = chans[i], chans[min(i + 1, last)]
            for j in range(self.layers_per_block + 1):
                skip = c_skip_in if j == self.layers_per_block else c
                total += self._resnet((c_prev if j == 0 else c) + skip, c)
                if kind.startswith("CrossAttn"):
                    total += self._transformer(c, layers[i])
            total += conv(c, c, 3) if i < last else 0
            c_prev = c
        return total

    def num_params(self) -> int:
        c0, c_last = self.block_out_channels[0], self.block_out_channels[-1]
        temb = 4 * c0
        stem = conv(self.in_channels, c0, 3) + linear(c0, temb) + linear(temb, temb)
        if self.projection_class_embeddings_input_dim:
            stem += linear(self.projection_class_embeddings_input_dim, temb) + linear(temb, temb)
        mid = 2 * self._resnet(c_last, c_last)
        mid += self._transformer(c_last, self.transformer_layers_per_block[-1])
        head = _norm(c0) + conv(c0, self.out_channels, 3)
        return stem + self._down() + mid + self._up() + head


class VaeConfig(_Config):
    """diffusers AutoencoderKL config fields that decide its parameters."""

    in_channels: int = Field(3, gt=0)
    out_channels: int = Field(3, gt=0)
    latent_channels: int = Field(gt=0)
    block_out_channels: tuple[int, ...]
    layers_per_block: int = Field(gt=0)
    use_quant_conv: bool = True
    use_post_quant_conv: bool = True

    @staticmethod
    def _resnet(c_in: int, c_out: int) -> int:
        shortcut = conv(c_in, c_out, 1) if c_in != c_out else 0
        return _norm(c_in) + conv(c_in, c_out, 3) + _norm(c_out) + conv(c_out, c_out, 3) + shortcut

    def _mid(self) -> int:
        c = self.block_out_channels[-1]
        return 2 * self._resnet(c, c) + _norm(c) + 4 * linear(c, c)  # one attention block

    def encoder_params(self) -> int:
        chans, last = self.block_out_channels, len(self.block_out_channels) - 1
        total, c_prev = conv(self.in_channels, chans[0], 3), chans[0]
        for i, c in enumerate(chans):
            for j in range(self.layers_per_block):
                total += self._resnet(c_prev if j == 0 else c, c)
            total += conv(c, c, 3) if i < last else 0
            c_prev = c
        out = _norm(chans[-1]) + conv(chans[-1], 2 * self.latent_channels, 3)
        quant = conv(2 * self.latent_channels, 2 * self.latent_channels, 1)
        return total + self._mid() + out + (quant if self.use_quant_conv else 0)

    def decoder_params(self) -> int:
        chans = self.block_out_channels[::-1]
        last = len(chans) - 1
        total, c_prev = conv(self.latent_channels, chans[0], 3), chans[0]
        for i, c in enumerate(chans):
            for j in range(self.layers_per_block + 1):
                total += self._resnet(c_prev if j == 0 else c, c)
            total += conv(c, c, 3) if i < last else 0
            c_prev = c
        out = _norm(chans[-1]) + conv(chans[-1], self.out_channels, 3)
        post = conv(self.latent_channels, self.latent_channels, 1)
        return total + self._mid() + out + (post if self.use_post_quant_conv else 0)

    def num_params(self) -> int:
        return self.encoder_params() + self.decoder_params()


def _timestep_text(width: int, pooled: int, guidance: bool) -> int:
    """CombinedTimestep(Guidance)TextProjEmbeddings: 256-wide sinusoid -> MLP, pooled text ->
    MLP, and FLUX.1 [dev]'s guidance embedder."""
    mlp = linear(256, width) + linear(width, width)
    return mlp * (2 if guidance else 1) + linear(pooled, width) + linear(width, width)


class MMDiTConfig(_Config):
    """diffusers SD3Transformer2DModel config fields that decide its parameters."""

    in_channels: int = Field(gt=0)
    out_channels: int = Field(gt=0)
    patch_size: int = Field(gt=0)
    num_layers: int = Field(gt=0)
    num_attention_heads: int = Field(gt=0)
    attention_head_dim: int = Field(gt=0)
    joint_attention_dim: int = Field(gt=0, description="width of the T5/CLIP text embeddings")
    caption_projection_dim: int = Field(gt=0)
    pooled_projection_dim: int = Field(gt=0)
    qk_norm: bool = Field(False, description="'rms_norm' in the config: RMSNorm on q and k")
    dual_attention_layers: tuple[int, ...] = Field(
        (), description="SD 3.5 medium: blocks with a second, image-only attention"
    )

    @property
    def width(self) -> int:
        return self.num_attention_heads * self.attention_head_dim

    def _block(self, index: int) -> int:
        d, hd = self.width, self.attention_head_dim
        last = index == self.num_layers - 1  # context_pre_only: no text output
        dual = index in self.dual_attention_layers
        qk = 2 * hd if self.qk_norm else 0
        ff = linear(d, 4 * d) + linear(4 * d, d)
        total = linear(d, (9 if dual else 6) * d) + linear(d, (2 if last else 6) * d)
        total += 7 * linear(d, d) + 2 * qk + (0 if last else linear(d, d) + ff)
        total += (4 * linear(d, d) + qk) if dual else 0
        return total + ff

    def num_params(self) -> int:
        d, p = self.width, self.patch_size
        stem = conv(self.in_channels, d, p) + linear(self.joint_attention_dim,
                                                     self.caption_projection_dim)  # fmt: skip
        stem += _timestep_text(d, self.pooled_projection_dim, guidance=False)
        blocks = sum(self._block(i) for i in range(self.num_layers))
        return stem + blocks + linear(d, 2 * d) + linear(d, p * p * self.out_channels)


class FluxConfig(_Config):
    """diffusers FluxTransformer2DModel config fields that decide its parameters."""

    in_channels: int = Field(gt=0, description="packed latent channels (16 x 2 x 2)")
    patch_size: int = Field(gt=0)
    num_layers: int = Field(gt=0, description="double-stream (joint) blocks")
    num_single_layers: int = Field(gt=0, description="single-stream blocks")
    num_attention_heads: int = Field(gt=0)
    attention_head_dim: int = Field(gt=0)
    joint_attention_dim: int = Field(gt=0)
    pooled_projection_dim: int = Field(gt=0)
    guidance_embeds: bool = Field(description="FLUX.1 [dev]: distilled guidance embedding")

    @property
    def width(self) -> int:
        return self.num_attention_heads * self.attention_head_dim

    def num_params(self) -> int:
        d, hd = self.width, self.attention_head_dim
        ff = linear(d, 4 * d) + linear(4 * d, d)
        double = 2 * linear(d, 6 * d) + 8 * linear(d, d) + 4 * hd + 2 * ff
        single = linear(d, 3 * d) + linear(d, 4 * d) + linear(5 * d, d) + 3 * linear(d, d) + 2 * hd
        stem = linear(self.in_channels, d) + linear(self.joint_attention_dim, d)
        stem += _timestep_text(d, self.pooled_projection_dim, self.guidance_embeds)
        head = linear(d, 2 * d) + linear(d, self.patch_size**2 * self.in_channels)
        return stem + self.num_layers * double + self.num_single_layers * single + head


class ClipTextConfig(_Config):
    """transformers CLIPTextConfig fields that decide CLIPTextModel(WithProjection)'s size."""

    hidden_size: int = Field(gt=0)
    intermediate_size: int = Field(gt=0)
    num_hidden_layers: int = Field(gt=0)
    num_attention_heads: int = Field(gt=0)
    vocab_size: int = Field(gt=0)
    max_position_embeddings: int = Field(gt=0)
    projection_dim: int = Field(0, ge=0, description="text_projection width; 0: no projection")

    def num_params(self) -> int:
        h = self.hidden_size
        layer = 2 * _norm(h) + 4 * linear(h, h) + linear(h, self.intermediate_size)
        layer += linear(self.intermediate_size, h)
        embeddings = (self.vocab_size + self.max_position_embeddings) * h
        projection = h * self.projection_dim
        return embeddings + self.num_hidden_layers * layer + _norm(h) + projection


class T5EncoderConfig(_Config):
    """transformers T5Config fields that decide T5EncoderModel's size (gated-GELU v1.1)."""

    d_model: int = Field(gt=0)
    d_kv: int = Field(gt=0)
    d_ff: int = Field(gt=0)
    num_layers: int = Field(gt=0)
    num_heads: int = Field(gt=0)
    vocab_size: int = Field(gt=0)
    relative_attention_num_buckets: int = Field(32, gt=0)

    def num_params(self) -> int:
        d, inner = self.d_model, self.num_heads * self.d_kv
        layer = 4 * d * inner + 3 * d * self.d_ff + 2 * d  # q k v o, wi_0 wi_1 wo, two RMSNorms
        relative = self.relative_attention_num_buckets * self.num_heads
        return self.vocab_size * d + self.num_layers * layer + relative + d
