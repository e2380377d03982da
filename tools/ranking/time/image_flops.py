"""Training FLOPs per image of a diffusion fine-tuning job, at its resolution.

Units: FLOPs (not per second) per training image; a multiply-add is 2, as in flops.py.

Forward FLOPs of the denoiser for one image:
- a linear layer or convolution costs 2 x its weights x the positions it runs over (tokens, or
  output pixels of the latent grid at its level);
- attention costs 4 x s_q x s_kv x width per attention (Q K^T and A V), with s the image tokens
  plus, for SD 3 and FLUX.1's joint attention, the text tokens; a UNet's cross-attention reads
  the 77 text tokens.
The step costs the forward once, the backward twice for weights that train and once for frozen
weights (input gradients only), as tools/ranking/time/flops.py counts for language models
(Kaplan et al. 2020, section 2.1: backward = 2 x forward); gradient checkpointing reruns the
forward once more. A LoRA job's adapters add 2 x rank x (d_in + d_out) per position per adapted
layer, trained. The VAE encoder and the text encoders run forward only, once per image, unless
their outputs are cached.
"""

from __future__ import annotations

from tools.architectures.diffusion import DiffusionModel
from tools.architectures.diffusion_parts import ClipTextConfig, FluxConfig, MMDiTConfig, UNetConfig
from tools.memory.images.diffusion import DiffusionJob, lora_params

__all__ = ["denoiser_forward_flops", "image_training_flops"]

FORWARD, BACKWARD_TRAINED, BACKWARD_FROZEN = 1.0, 2.0, 1.0
UNET_TEXT_TOKENS = 77


def _conv(c_in: int, c_out: int, k: int, pixels: int) -> float:
    return 2.0 * c_in * c_out * k * k * pixels


def _unet_transformer(cfg: UNetConfig, width: int, layers: int, pixels: int) -> float:
    c, x, t = width, cfg.cross_attention_dim, UNET_TEXT_TOKENS
    block = 2.0 * pixels * (4 * c * c + 2 * c * c + 8 * c * c + 4 * c * c)  # attn1, attn2 q/o, ff
    block += 2.0 * t * 2 * x * c  # cross-attention k and v over the text tokens
    block += 4.0 * pixels * pixels * c + 4.0 * pixels * t * c  # self- and cross-attention
    return 2.0 * pixels * 2 * c * c + layers * block  # proj_in, proj_out


def _unet_resnet(c_in: int, c_out: int, pixels: int) -> float:
    shortcut = _conv(c_in, c_out, 1, pixels) if c_in != c_out else 0.0
    return _conv(c_in, c_out, 3, pixels) + _conv(c_out, c_out, 3, pixels) + shortcut


def _unet_flops(cfg: UNetConfig, latent: int) -> float:
    chans, layers, last = (
        cfg.block_out_channels,
        cfg.transformer_layers_per_block,
        len(cfg.block_out_channels) - 1,
    )

    def px(level: int) -> int:
        return max(1, latent >> level) ** 2

    total = _conv(cfg.in_channels, chans[0], 3, px(0)) + _conv(chans[0], cfg.out_channels, 3, px(0))
    c_prev = chans[0]
    for i, kind in enumerate(cfg.down_block_types):
        for j in range(cfg.layers_per_block):
            total += _unet_resnet(c_prev if j == 0 else chans[i], chans[i], px(i))
            if kind.startswith("CrossAttn"):
                total += _unet_transformer(cfg, chans[i], layers[i], px(i))
        total += _conv(chans[i], chans[i], 3, px(i + 1)) if i < last else 0.0
        c_prev = chans[i]
    total += 2 * _unet_resnet(chans[-1], chans[-1], px(last))
    total += _unet_transformer(cfg, chans[-1], layers[-1], px(last))
    c_prev = chans[-1]
    for i, kind in enumerate(cfg.up_block_types):
        level = last - i
        c, skip_in = chans[level], chans[max(level - 1, 0)]
        for j in range(cfg.layers_per_block + 1):
            skip = skip_in if j == cfg.layers_per_block else c
            total += _unet_resnet((c_prev if j == 0 else c) + skip, c, px(level))
            if kind.startswith("CrossAttn"):
                total += _unet_transformer(cfg, c, layers[level], px(level))
        total += _conv(c, c, 3, px(level - 1)) if level > 0 else 0.0
        c_prev = c
    return total


def _dit_flops(model: DiffusionModel, resolution: int) -> float:
    cfg = model.denoiser
    assert isinstance(cfg, MMDiTConfig | FluxConfig)
    d, image, text = cfg.width, model.image_tokens(resolution), model.text_tokens()
    s = image + text
    ff = 2 * 4 * d * d
    attention = 4.0 * s * s * d
    if isinstance(cfg, FluxConfig):
        double = 2.0 * s * (4 * d * d + ff) + attention  # each stream: q k v, out, MLP
        single = 2.0 * s * (3 * d * d + 4 * d * d + 5 * d * d) + attention
        return cfg.num_layers * double + cfg.num_single_layers * single
    dual = 2.0 * image * 4 * d * d + 4.0 * image * image * d
    per = 2.0 * s * (4 * d * d + ff) + attention
    return cfg.num_layers * per + len(cfg.dual_attention_layers) * dual


def denoiser_forward_flops(model: DiffusionModel, resolution: int) -> float:
    """Forward FLOPs of the denoiser for one image of `resolution` px."""
    if isinstance(model.denoiser, UNetConfig):
        return _unet_flops(model.denoiser, model.latent_side(resolution))
    return _dit_flops(model, resolution)


def _positions(model: DiffusionModel, resolution: int) -> float:
    """Positions an adapted layer runs over, on average: the denoiser's tokens (a UNet's
    attention layers run at their level's pixels; its top attention level is used)."""
    if isinstance(model.denoiser, UNetConfig):
        first = next(
            i for i, k in enumerate(model.denoiser.down_block_types) if k.startswith("CrossAttn")
        )
        return float(max(1, model.latent_side(resolution) >> first) ** 2)
    return float(model.image_tokens(resolution) + model.text_tokens())


def _encoders_flops(job: DiffusionJob) -> float:
    """Forward FLOPs of the text encoders (2 x weights x tokens, embeddings excluded) and of
    the VAE encoder (each convolution at its level's pixels), when not cached."""
    model, total = job.model, 0.0
    if job.encoders_resident:
        for enc in model.text_encoders:
            weights = enc.config.num_params()
            if isinstance(enc.config, ClipTextConfig):
                weights -= enc.config.vocab_size * enc.width
            total += 2.0 * weights * enc.max_tokens
    if not job.latents_cached:  # the job's value, else its trainer profile's
        total += _vae_encoder_flops(model, job.resolution)
    return total


def _vae_encoder_flops(model: DiffusionModel, resolution: int) -> float:
    vae, chans = model.vae, model.vae.block_out_channels
    total, c_prev = _conv(vae.in_channels, chans[0], 3, resolution**2), chans[0]
    for i, c in enumerate(chans):
        pixels = max(1, resolution >> i) ** 2
        for j in range(vae.layers_per_block):
            total += _unet_resnet(c_prev if j == 0 else c, c, pixels)
        if i < len(chans) - 1:
            total += _conv(c, c, 3, max(1, resolution >> (i + 1)) ** 2)
        c_prev = c
    last = max(1, resolution >> (len(chans) - 1)) ** 2
    mid = 2 * _unet_resnet(chans[-1], chans[-1], last) + 2.0 * last * 4 * chans[-1] ** 2
    return total + mid + 4.0 * last * last * chans[-1]


def image_training_flops(job: DiffusionJob) -> float:
    """Executed FLOPs to train on one image (prior preservation: its class image too)."""
    model = job.model
    forward = denoiser_forward_flops(model, job.resolution)
    full = job.method == "full"
    passes = FORWARD + (BACKWARD_TRAINED if full else BACKWARD_FROZEN)
    passes += FORWARD if job.gradient_checkpointing else 0.0
    total = forward * passes
    if not full:
        adapters = 2.0 * lora_params(model, job.lora_rank) * _positions(model, job.resolution)
        total += adapters * (
            FORWARD + BACKWARD_TRAINED + (FORWARD if job.gradient_checkpointing else 0.0)
        )
    total += _encoders_flops(job)
    return total * (2 if job.prior_preservation else 1)
