"""Vision-language memory: image tokens in the sequence; tower and projector frozen or trained."""

from __future__ import annotations

from typing import Any

import pytest

from tools.architectures.multimodal import find_multimodal
from tools.architectures.vision import VisionLanguageModel
from tools.memory.estimator import estimate
from tools.memory.images.vision import estimate_vlm
from tools.memory.inputs import EstimateInput
from tools.units import GIB


def _vlm(name: str) -> VisionLanguageModel:
    model = find_multimodal(name)
    assert isinstance(model, VisionLanguageModel)
    return model


def test_image_tokens_join_the_language_sequence() -> None:
    llava = _vlm("llava 1.5 7b")
    est = estimate_vlm(llava, method="lora", text_tokens=512, images_per_sample=2)
    assert est.seq_len == 512 + 2 * 576
    alone = estimate(EstimateInput(model=llava.language, method="lora", seq_len=512 + 2 * 576))
    assert est.language.per_gpu.total == alone.per_gpu.total
    frozen_tower = 2 * llava.vision_params()
    projector = est.per_gpu.weights - alone.per_gpu.weights - frozen_tower
    assert projector == pytest.approx(llava.projector_params() * 4, rel=0.01)  # fp32 master
    assert est.per_gpu.activations == alone.per_gpu.activations  # frozen tower: no graph


def test_training_the_tower_adds_its_states_and_activations() -> None:
    qwen = _vlm("qwen2 vl 7b")
    frozen = estimate_vlm(qwen, method="full")
    trained = estimate_vlm(qwen, method="full", train_vision_tower=True)
    assert trained.trainable_params - frozen.trainable_params == qwen.vision_params()
    assert trained.per_gpu.total > frozen.per_gpu.total
    assert trained.per_gpu.total == (
        trained.per_gpu.weights + trained.per_gpu.gradients + trained.per_gpu.optimizer
        + trained.per_gpu.activations + trained.per_gpu.overhead
    )  # fmt: skip


def test_zero3_shards_the_vision_side_too() -> None:
    qwen = _vlm("qwen2 vl 7b")
    one = estimate_vlm(qwen, method="full")
    eight = estimate_vlm(qwen, method="full", zero_stage=3, num_gpus=8)
    assert eight.per_gpu.total < one.per_gpu.total / 4
    assert one.per_gpu.total / GIB == pytest.approx(149.53, abs=0.05)  # golden
    assert eight.per_gpu.total / GIB == pytest.approx(25.26, abs=0.05)  # golden


def test_qwen_resolution_sets_the_tokens() -> None:
    qwen = _vlm("qwen2 vl 7b")
    small = estimate_vlm(qwen, method="lora", resolution=448)
    large = estimate_vlm(qwen, method="lora", resolution=896)
    assert large.image_tokens_per_image == 4 * small.image_tokens_per_image == 4 * 256
    assert large.per_gpu.activations > small.per_gpu.activations


def test_llama32_vision_cross_attends_without_image_tokens() -> None:
    """Llama 3.2 Vision: text-only sequence; the vision states and each cross-attention
    layer's k and v (1024 wide) over 1601 tokens per tile are kept (one layer's when
    recomputing)."""
    mllama = _vlm("llama 3.2 11b vision")
    states, kv = 1601 * 4096 * 2, 1601 * 2 * 1024 * 2
    for ckpt, layers in (("none", 8), ("full", 1)):
        settings: dict[str, Any] = {"method": "lora", "gradient_checkpointing": ckpt}
        est = estimate_vlm(mllama, text_tokens=512, **settings)
        assert est.seq_len == 512 and est.image_tokens_per_image == 0
        alone = estimate(EstimateInput(model=mllama.language, seq_len=512, **settings))
        assert est.per_gpu.activations - alone.per_gpu.activations == states + layers * kv
        big = estimate_vlm(mllama, text_tokens=512, resolution=1120, **settings)
        assert big.per_gpu.activations - alone.per_gpu.activations == 4 * (states + layers * kv)
    est = estimate_vlm(mllama, method="lora", text_tokens=512)
    assert est.total_params == 10_670_220_835
    assert est.per_gpu.total / GIB == pytest.approx(22.63, abs=0.01)
