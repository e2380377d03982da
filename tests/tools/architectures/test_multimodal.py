"""Diffusion pipelines and vision-language models: exact counts per part, lookups, configs.

Golden counts are the libraries' own: each was checked by building the diffusers / transformers
class from the same published config on the meta device (the cross-checks below do it again
where the library is installed; transformers is a test dependency, diffusers is optional).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tools.architectures.diffusion import DiffusionModel
from tools.architectures.multimodal import (
    find_multimodal,
    list_diffusion,
    list_vlms,
    read_model_index,
    vlm_from_config,
)
from tools.architectures.vision import VisionLanguageModel
from tools.errors import InvalidInputError

# (name, {part: params}) as diffusers / transformers count them.
DIFFUSION_GOLDEN = [
    ("sd 1.5", {"unet": 859_520_964, "CLIP-L": 123_060_480, "VAE": 83_653_863}),
    ("sd 2.1", {"unet": 865_910_724, "OpenCLIP-H": 340_387_840, "VAE": 83_653_863}),
    ("sdxl refiner", {"unet": 2_259_526_660, "OpenCLIP-bigG": 694_659_840, "VAE": 83_653_863}),
    (
        "sdxl",
        {"unet": 2_567_463_684, "CLIP-L": 123_060_480, "OpenCLIP-bigG": 694_659_840,
         "VAE": 83_653_863},
    ),
    (
        "sd3.5 medium",
        {"mmdit": 2_243_171_520, "CLIP-L": 123_650_304, "OpenCLIP-bigG": 694_659_840,
         "T5-XXL": 4_762_310_656, "VAE": 83_819_683},
    ),
    (
        "sd3.5 large",
        {"mmdit": 8_056_627_520, "CLIP-L": 123_650_304, "OpenCLIP-bigG": 694_659_840,
         "T5-XXL": 4_762_310_656, "VAE": 83_819_683},
    ),
    ("flux.1 [dev]", {"flux": 11_901_408_320, "CLIP-L": 123_060_480, "T5-XXL": 4_762_310_656,
                      "VAE": 83_819_683}),
    ("flux schnell", {"flux": 11_891_178_560, "CLIP-L": 123_060_480, "T5-XXL": 4_762_310_656,
                      "VAE": 83_819_683}),
]  # fmt: skip
VLM_GOLDEN = [
    ("llava 1.5 7b", 303_507_456, 20_979_712, 7_063_427_072),
    ("llava-1.5-13b", 303_507_456, 31_467_520, 13_351_494_656),
    ("Qwen/Qwen2-VL-7B-Instruct", 675_759_104, 0, 8_291_375_616),
    ("qwen2.5-vl 7b", 676_550_144, 0, 8_292_166_656),
    ("llama 3.2 11b vision", 863_567_379, 31_461_376, 10_670_220_835),
]


@pytest.mark.parametrize(("name", "parts"), DIFFUSION_GOLDEN)
def test_diffusion_parts_exact(name: str, parts: dict[str, int]) -> None:
    model = find_multimodal(name)
    assert isinstance(model, DiffusionModel)
    assert {c.name: c.params for c in model.components()} == parts
    assert model.total_params() == sum(parts.values())
    assert model.source.startswith("https://huggingface.co/")


@pytest.mark.parametrize(("name", "vision", "projector", "total"), VLM_GOLDEN)
def test_vlm_parts_exact(name: str, vision: int, projector: int, total: int) -> None:
    model = find_multimodal(name)
    assert isinstance(model, VisionLanguageModel)
    assert model.vision_params() == vision
    assert model.projector_params() == projector
    assert model.total_params() == total
    extras = model.cross_attention_params()  # Llama 3.2 Vision: 34,832; others 0
    assert model.language.total_params() + extras == total - vision - projector


def test_tokens_follow_the_resolution() -> None:
    sdxl, flux = find_multimodal("sdxl"), find_multimodal("flux dev")
    assert isinstance(sdxl, DiffusionModel) and isinstance(flux, DiffusionModel)
    assert sdxl.latent_side(1024) == 128 and sdxl.image_tokens(1024) == 128 * 128
    assert flux.image_tokens(1024) == 64 * 64  # 8x VAE, then 2x2 patches
    assert flux.image_tokens(512) * 4 == flux.image_tokens(1024)
    assert flux.text_tokens() == 512 and sdxl.text_tokens() == 77
    sd3 = find_multimodal("sd3.5 large")
    assert isinstance(sd3, DiffusionModel) and sd3.text_tokens() == 77 + 77 + 256
    llava, qwen = find_multimodal("llava 1.5 7b"), find_multimodal("qwen2 vl 7b")
    assert isinstance(llava, VisionLanguageModel) and isinstance(qwen, VisionLanguageModel)
    assert llava.image_tokens(336) == 576 and llava.image_tokens(1024) == 576
    assert qwen.image_tokens(448) == 448 * 448 // (14 * 14 * 4)  # 256
    assert qwen.image_tokens(1024) == (1036 // 28) ** 2  # resized to a multiple of 28 px


def test_unknown_and_language_names_are_not_multimodal() -> None:
    assert find_multimodal("llama 3.1 8b") is None
    assert find_multimodal("no such model") is None
    assert len(list_diffusion()) == 8 and len(list_vlms()) == 5


def test_multimodal_model_is_the_union_of_the_two_classes() -> None:
    """`MultimodalModel` is built on first use (the classes load only for an image model) and
    is the union every built-in entry belongs to."""
    from tools.architectures import multimodal

    union = multimodal.MultimodalModel
    assert union == DiffusionModel | VisionLanguageModel
    assert all(isinstance(m, union) for m in [*list_diffusion(), *list_vlms()])
    with pytest.raises(AttributeError, match="no attribute 'MultiModalModel'"):
        _ = multimodal.MultiModalModel  # type: ignore[attr-defined]


def _write(folder: Path, name: str, data: dict[str, Any]) -> None:
    (folder / name).parent.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(json.dumps(data), encoding="utf-8")


def test_model_index_folder_reads_the_component_configs(tmp_path: Path) -> None:
    sdxl = find_multimodal("sdxl")
    assert isinstance(sdxl, DiffusionModel)
    _write(tmp_path, "model_index.json", {"_class_name": "StableDiffusionXLPipeline"})
    unet = {**sdxl.denoiser.model_dump(), "cross_attention_dim": 2048, "attention_head_dim": [5]}
    unet["transformer_layers_per_block"] = 1  # an int applies to every level
    _write(tmp_path, "unet/config.json", {k: list(v) if isinstance(v, tuple) else v
                                          for k, v in unet.items()})  # fmt: skip
    _write(tmp_path, "vae/config.json", {"latent_channels": 4, "block_out_channels": [128, 256]})
    model = read_model_index(tmp_path)
    assert model.denoiser.transformer_layers_per_block == (1, 1, 1)  # type: ignore[union-attr]
    assert model.denoiser_params() < sdxl.denoiser_params()
    assert model.vae.block_out_channels == (128, 256)
    assert model.text_encoder_params() == sdxl.text_encoder_params()  # no folder: as published


def test_unsupported_pipeline_names_the_supported_ones(tmp_path: Path) -> None:
    _write(tmp_path, "model_index.json", {"_class_name": "KandinskyPipeline"})
    with pytest.raises(InvalidInputError, match="StableDiffusionXLPipeline"):
        read_model_index(tmp_path)
    qwen = find_multimodal("qwen2 vl 7b")
    assert isinstance(qwen, VisionLanguageModel)
    with pytest.raises(InvalidInputError, match="Qwen2VLForConditionalGeneration"):
        vlm_from_config(
            {"architectures": ["PaliGemmaForConditionalGeneration"]}, qwen.language, "x"
        )


def test_vlm_config_reads_the_vision_tower() -> None:
    qwen = find_multimodal("qwen2 vl 7b")
    assert isinstance(qwen, VisionLanguageModel)
    config = {"architectures": ["Qwen2VLForConditionalGeneration"],
              "vision_config": {"depth": 32, "embed_dim": 1280, "mlp_ratio": 4, "num_heads": 16,
                                "hidden_size": 3584}}  # fmt: skip
    assert vlm_from_config(config, qwen.language, "cfg").total_params() == qwen.total_params()


def _count(module: Any) -> int:
    return sum(p.numel() for p in module.parameters())


@pytest.mark.slow
@pytest.mark.parametrize(
    "name", ["sd 1.5", "sd 2.1", "sdxl", "sdxl refiner", "sd3.5 medium", "sd3.5 large", "flux dev"]
)
def test_counts_match_diffusers(name: str) -> None:
    """diffusers builds each denoiser and VAE from the same config with the same counts."""
    diffusers = pytest.importorskip("diffusers")
    torch = pytest.importorskip("torch")
    model = find_multimodal(name)
    assert isinstance(model, DiffusionModel)
    cls = {"unet": "UNet2DConditionModel", "mmdit": "SD3Transformer2DModel",
           "flux": "FluxTransformer2DModel"}[model.denoiser_kind]  # fmt: skip
    config = model.denoiser.model_dump()
    if model.denoiser_kind == "unet":
        config["attention_head_dim"] = 8
        if model.family in ("sd2", "sdxl"):
            heads = [c // 64 for c in model.denoiser.block_out_channels]  # type: ignore[union-attr]
            config |= {"attention_head_dim": heads, "use_linear_projection": True}
        if model.family == "sdxl":
            config |= {"addition_embed_type": "text_time", "addition_time_embed_dim": 256}
    if model.denoiser_kind == "mmdit":
        config["qk_norm"] = "rms_norm"
    vae = model.vae.model_dump() | {"down_block_types": ["DownEncoderBlock2D"] * 4,
                                    "up_block_types": ["UpDecoderBlock2D"] * 4}  # fmt: skip
    with torch.device("meta"):
        assert _count(getattr(diffusers, cls)(**config)) == model.denoiser_params()
        assert _count(diffusers.AutoencoderKL(**vae)) == model.vae.num_params()


@pytest.mark.slow
def test_counts_match_transformers() -> None:
    """transformers builds LLaVA 1.5 7B, the Qwen vision towers and the text encoders alike."""
    torch = pytest.importorskip("torch")
    tf = pytest.importorskip("transformers")
    llava = find_multimodal("llava 1.5 7b")
    qwen2, qwen25 = find_multimodal("qwen2 vl 7b"), find_multimodal("qwen2.5 vl 7b")
    sd3, sd21 = find_multimodal("sd3.5 large"), find_multimodal("sd 2.1")
    assert isinstance(llava, VisionLanguageModel) and isinstance(sd3, DiffusionModel)
    assert isinstance(sd21, DiffusionModel)
    assert isinstance(qwen2, VisionLanguageModel) and isinstance(qwen25, VisionLanguageModel)
    vision = llava.vision.model_dump(exclude={"kind"})
    text = {"hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
            "num_attention_heads": 32, "vocab_size": 32064}  # fmt: skip
    with torch.device("meta"):
        built = tf.LlavaForConditionalGeneration(
            tf.LlavaConfig(vision_config=vision, text_config=text)
        )
        assert _count(built) == llava.total_params()
        q2 = tf.Qwen2VLConfig(vision_config={"depth": 32, "embed_dim": 1280, "mlp_ratio": 4,
                                             "num_heads": 16, "hidden_size": 3584})  # fmt: skip
        q2_built = tf.Qwen2VLForConditionalGeneration(q2)
        assert _count(q2_built.model.visual) == qwen2.vision_params()
        q25 = tf.Qwen2_5_VLConfig(vision_config={"depth": 32, "hidden_size": 1280,
                                                 "intermediate_size": 3420, "num_heads": 16,
                                                 "out_hidden_size": 3584})  # fmt: skip
        assert (
            _count(tf.Qwen2_5_VLForConditionalGeneration(q25).model.visual)
            == qwen25.vision_params()
        )
        for enc in sd3.text_encoders + sd21.text_encoders:
            cfg = enc.config.model_dump()
            if enc.name == "T5-XXL":
                built_enc = tf.T5EncoderModel(tf.T5Config(**cfg, feed_forward_proj="gated-gelu"))
            elif cfg["projection_dim"]:
                built_enc = tf.CLIPTextModelWithProjection(tf.CLIPTextConfig(**cfg))
            else:  # SD 2.x: CLIPTextModel, no projection
                built_enc = tf.CLIPTextModel(tf.CLIPTextConfig(**cfg))
            assert _count(built_enc) == enc.config.num_params()


@pytest.mark.slow
def test_llama32_vision_matches_transformers() -> None:
    """MllamaForConditionalGeneration from the published vision_config / text_config."""
    torch = pytest.importorskip("torch")
    tf = pytest.importorskip("transformers")
    model = find_multimodal("llama 3.2 11b vision")
    assert isinstance(model, VisionLanguageModel) and model.cross_attention is not None
    ratios = [[1, 1], [1, 2], [1, 3], [1, 4], [2, 1], [2, 2], [3, 1], [4, 1]]
    vision = model.vision.model_dump(exclude={"kind", "aspect_ratios"})
    vision |= {"supported_aspect_ratios": ratios, "attention_heads": 16,
               "intermediate_layers_indices": [3, 7, 15, 23, 30]}  # fmt: skip
    lm = model.language
    text = {"hidden_size": lm.hidden_size, "intermediate_size": lm.intermediate_size,
            "num_attention_heads": lm.num_heads, "num_key_value_heads": lm.num_kv_heads,
            "vocab_size": lm.vocab_size, "num_hidden_layers": lm.num_layers,
            "cross_attention_layers": [3, 8, 13, 18, 23, 28, 33, 38],
            "tie_word_embeddings": False}  # fmt: skip
    with torch.device("meta"):
        built = tf.MllamaForConditionalGeneration(
            tf.MllamaConfig(vision_config=vision, text_config=text)
        )
    assert _count(built.model.vision_model) == model.vision_params()
    assert _count(built.model.multi_modal_projector) == model.projector_params()
    assert _count(built) == model.total_params()


def test_vlm_config_files_are_read(tmp_path: Path) -> None:
    from tools.architectures.multimodal import vlm_from_config_file

    llava = {
        "architectures": ["LlavaForConditionalGeneration"], "model_type": "llava",
        "text_config": {"model_type": "llama", "max_position_embeddings": 4096,
                        "vocab_size": 32064},
        "vision_config": {"hidden_size": 1024, "image_size": 336, "intermediate_size": 4096,
                          "num_attention_heads": 16, "num_hidden_layers": 24, "patch_size": 14},
    }  # fmt: skip
    _write(tmp_path, "llava/config.json", llava)
    read = vlm_from_config_file(tmp_path / "llava" / "config.json")
    assert read is not None and read.total_params() == 7_063_427_072  # LlamaConfig defaults
    qwen = {
        "architectures": ["Qwen2VLForConditionalGeneration"], "model_type": "qwen2_vl",
        "hidden_size": 3584, "intermediate_size": 18944, "num_attention_heads": 28,
        "num_hidden_layers": 28, "num_key_value_heads": 4, "vocab_size": 152064,
        "vision_config": {"depth": 32, "embed_dim": 1280, "mlp_ratio": 4, "num_heads": 16,
                          "hidden_size": 3584},
    }  # fmt: skip
    _write(tmp_path, "qwen.json", qwen)
    read_qwen = vlm_from_config_file(tmp_path / "qwen.json")
    assert read_qwen is not None and read_qwen.total_params() == 8_291_375_616
    _write(tmp_path, "llama.json", {"architectures": ["LlamaForCausalLM"]})
    assert vlm_from_config_file(tmp_path / "llama.json") is None
