"""Image-model jobs read from messages in six languages."""

from __future__ import annotations

import pytest

from assistant.extract.slots import extract_slots

SDXL = "stabilityai/stable-diffusion-xl-base-1.0"
FLUX = "black-forest-labs/FLUX.1-dev"
LLAVA = "llava-hf/llava-1.5-7b-hf"


@pytest.mark.parametrize(
    ("text", "lang", "expected"),
    [
        ("Stable Diffusion XL finetunen met dreambooth, welke GPU huur ik?", "nl",
         {"model": SDXL, "dreambooth": True}),
        ("Est-ce que je peux affiner LLaVA 1.5 7B sur une seule RTX 4090 ?", "fr",
         {"model": LLAVA}),
        ("FLUX.1-dev mit LoRA feintunen, 1024px, 30 Bilder", "de",
         {"model": FLUX, "method": "lora", "resolution": 1024, "images": 30}),
        ("SDXL DreamBooth LoRA at 1024px with 30 images, 800 steps, train the text encoder", "en",
         {"model": SDXL, "method": "lora", "resolution": 1024, "images": 30, "steps": 800,
          "dreambooth": True, "train_text_encoder": True}),
        ("SDXL con dreambooth, 20 imágenes de 1024x1024", "es",
         {"model": SDXL, "dreambooth": True, "images": 20, "resolution": 1024}),
        ("SDXL dreambooth, 25 görsel, 512 piksel", "tr",
         {"model": SDXL, "dreambooth": True, "images": 25, "resolution": 512}),
        # issue 25, pattern 4: resolution and image counts as people write them
        ("fine-tune SDXL with LoRA on 30 pics at 1024 res", "en",
         {"model": SDXL, "images": 30, "resolution": 1024}),
        ("SDXL LoRA mit 15 Selfies, 512er Auflösung", "de",
         {"model": SDXL, "images": 15, "resolution": 512}),
        ("SDXL, 1024'lük çözünürlükte 200 fotoğraf", "tr",
         {"model": SDXL, "images": 200, "resolution": 1024}),
        ("SDXL en résolution de 768 avec 40 photos", "fr",
         {"model": SDXL, "images": 40, "resolution": 768}),
        ("SDXL, resolución 512, 12 selfis", "es", {"model": SDXL, "images": 12, "resolution": 512}),
        ("SDXL met 50 plaatjes op resolutie 1024", "nl",
         {"model": SDXL, "images": 50, "resolution": 1024}),
    ],
)  # fmt: skip
def test_image_jobs_in_six_languages(text: str, lang: str, expected: dict[str, object]) -> None:
    given = extract_slots(text, lang).given()
    assert {k: given.get(k) for k in expected} == expected


def test_no_resolution_from_other_words() -> None:
    assert extract_slots("1024 resources on 2048 tokens resolution", "en").given() == {
        "seq_len": 2048
    }


def test_negations_and_the_masking() -> None:
    off = extract_slots("SDXL LoRA, text encoder frozen, without EMA", "en").given()
    assert off["train_text_encoder"] is False and off["ema"] is False
    on = extract_slots("SDXL, cache latents, prior preservation", "en").given()
    assert on["cache_latents"] is True and on["prior_preservation"] is True
    llava = extract_slots("LLaVA 1.5 7B with 2048 tokens", "en").given()
    assert llava["model"] == LLAVA and llava["seq_len"] == 2048  # "7B" is not a bare size
    plain = extract_slots("llama 3.1 8b lora with 2048 tokens on 2 GPUs", "en").given()
    assert not {"resolution", "images", "steps", "dreambooth"} & set(plain)


@pytest.mark.parametrize(
    ("text", "lang", "expected"),
    [
        ("lower the resolution to 768 please", "en", {"resolution": 768}),
        ("bump steps to 2000", "en", {"steps": 2000}),
        ("zet de resolutie op 896 en de stappen naar 1800", "nl",
         {"resolution": 896, "steps": 1800}),
        ("baisse la résolution à 768", "fr", {"resolution": 768}),
        ("çözünürlüğü 768 yap, adım sayısını 1500'e çıkar", "tr",
         {"resolution": 768, "steps": 1500}),
        ("Auflösung auf 768 runter, Schritte auf 1500", "de", {"resolution": 768, "steps": 1500}),
        ("sube los pasos a 2500", "es", {"steps": 2500}),
        ("lora on sdxl with 40 product shots", "en", {"images": 40}),
    ],
)  # fmt: skip
def test_a_change_written_noun_first(text: str, lang: str, expected: dict[str, object]) -> None:
    """Issue 25, patterns 3-4: "steps to 2000", "Auflösung auf 768" set nothing before."""
    given = extract_slots(text, lang).given()
    assert {k: given.get(k) for k in expected} == expected


def test_french_pas_before_a_number_is_a_negation_not_steps() -> None:
    assert "steps" not in extract_slots("je ne veux pas 2000 images", "fr").given()
