"""What the common diffusion trainers do when the user does not say: profiles a job can name.

A `DiffusionJob` with `stack` set takes the profile's value for every field the job leaves open
(None); what the job sets wins. Each default comes from the trainer's code or documentation:

- diffusers example scripts (examples/dreambooth/train_dreambooth_lora_flux.py,
  train_dreambooth_lora_sdxl.py, examples/text_to_image/train_text_to_image_lora.py): LoRA
  weights upcast to fp32 after the adapters are added (`cast_training_params(..., dtype=
  torch.float32)`), T5 prompts of 77 tokens (`--max_sequence_length` default; README_flux.md:
  "The default is 77"); latents are encoded every step unless `--cache_latents`, prompts are
  encoded once only for a single instance prompt without text-encoder training (the
  estimator's DreamBooth rule).
- SimpleTuner: LoRA weights in bf16 with the base (`base_model_default_dtype` bf16;
  documentation/quickstart/SD3.md: "When you're quantising the model, --base_model_default_dtype
  is set to bf16 by default"); text embeddings and VAE latents cached to disk before training and
  the text encoders unloaded ("This will begin the text embed and VAE output caching to disk",
  quickstart/FLUX.md; "We unload the text encoders before training", quickstart/SD3.md).
- ai-toolkit (ostris): latents cached to disk (`cache_latents_to_disk: true` in
  config/examples/train_lora_flux_24gb.yaml); the text encoders stay on the GPU unless
  `unload_text_encoder` or `cache_text_embeddings` is set (jobs/process/BaseSDTrainProcess.py:
  `unload_text_encoder=self.train_config.unload_text_encoder or
  self.is_caching_text_embeddings`); LoRA weights in fp32 (the same file:
  `self.network.force_to(self.device_torch, dtype=torch.float32)`).
- kohya-ss sd-scripts (train_network.py and its sdxl_ / flux_ subclasses): LoRA rank 4
  (`--network_dim` unset: networks/lora.py `if network_dim is None: network_dim = 4  # default`);
  LoRA on the text encoder(s) as well (`is_train_text_encoder`: `return not
  args.network_train_unet_only`); the network stays fp32 (it is cast to the 16-bit
  weight_dtype only with `--full_fp16` / `--full_bf16`: `network.to(weight_dtype)`); latents
  and text-encoder outputs are encoded every step (`--cache_latents`,
  `--cache_text_encoder_outputs`: `action="store_true"`, off); FLUX.1's T5 length is the
  model's (`--t5xxl_max_token_length` unset: 256 for schnell, 512 for dev). kohya's own
  `--mixed_precision` default is "no" (fp32); the job's precision is left to the job.

`check_stack(stack, kind)` refuses a trainer on the wrong kind of model: the image trainers
only on a diffusion pipeline, the language stacks (tools/enums.py `Stack`) on a language model
or a VLM's language model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from tools.enums import ImageStack, Stack, choices
from tools.errors import InvalidInputError

__all__ = ["IMAGE_STACKS", "ImageStack", "ImageStackProfile", "check_stack"]


@dataclass(frozen=True, slots=True)
class ImageStackProfile:
    """Defaults of one trainer; None leaves the estimator's own default."""

    name: str
    lora_dtype: Literal["fp32", "bf16"]
    max_sequence_length: int | None
    cache_latents: bool | None
    cache_text_embeddings: bool | None
    lora_rank: int | None = None
    train_text_encoder: bool | None = None


IMAGE_STACKS: dict[str, ImageStackProfile] = {
    "diffusers": ImageStackProfile("diffusers example scripts", "fp32", 77, None, None),
    "simpletuner": ImageStackProfile("SimpleTuner", "bf16", None, True, True),
    "ai-toolkit": ImageStackProfile("ai-toolkit", "fp32", None, True, False),
    "kohya": ImageStackProfile("kohya-ss sd-scripts", "fp32", None, False, False, 4, True),
}


def _words(vocabulary: tuple[str, ...]) -> str:
    return ", ".join(vocabulary[:-1]) + " or " + vocabulary[-1]


def check_stack(stack: str | None, kind: Literal["diffusion", "language"]) -> None:
    """Raise when `stack` is not a trainer of a `kind` model (None: no stack named)."""
    image, language = choices(ImageStack), choices(Stack)
    if stack is None or stack in (image if kind == "diffusion" else language):
        return
    if kind == "diffusion":
        valid = f"{_words(image)} for a diffusion model"
        other = f" ({stack} is a language-model stack)" if stack in language else ""
    else:
        valid = f"{_words(language)} for a language model (or a VLM's language model)"
        other = f" ({stack} is a diffusion trainer)" if stack in image else ""
    raise InvalidInputError("stack", stack, valid + other)
