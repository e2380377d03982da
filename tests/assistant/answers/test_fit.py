"""The fit answer: one verdict per memory size, sizes with the same verdict sharing one."""

from __future__ import annotations

from assistant.answers.fit import compose_fit_answer
from tools.fit import FitCheck
from tools.units import GIB

NEED = round(156.3 * GIB)


def _plain(text: str) -> str:
    """The answer with its no-break spaces (between a figure and its unit) as spaces."""
    return text.replace("\xa0", " ").replace("\u202f", " ")


def _check(vram_gib: float, need: int = NEED) -> FitCheck:
    vram = round(vram_gib * GIB)
    return FitCheck(
        model_id="meta-llama/Llama-3.1-8B", model_name="Llama 3.1 8B", gpu_count=1,
        vram_bytes=vram, need_bytes=need, spare_bytes=vram - need, fits=vram >= need,
        settings={"method": "full"}, ways=[],
    )  # fmt: skip


def test_two_sizes_of_one_gpu_with_the_same_verdict_share_it() -> None:
    text = _plain(compose_fit_answer("en", [_check(80), _check(94)], "H100", "full").text)
    assert text.count("does not fit") == 1, text
    assert text.startswith(
        "**No, it does not fit.** Llama 3.1 8B (full fine-tuning) needs about **156.3 GiB per"
        " GPU**, against 80.0 GiB or 94.0 GiB on your 1× H100. That is 62.3 GiB to 76.3 GiB"
        " short."
    ), text
    turkish = _plain(compose_fit_answer("tr", [_check(80), _check(94)], "H100", "full").text)
    assert "80,0 GiB veya 94,0 GiB" in turkish and "62,3 GiB ile 76,3 GiB arası eksik" in turkish


def test_different_verdicts_stay_apart() -> None:
    need = round(85 * GIB)
    text = _plain(
        compose_fit_answer("en", [_check(80, need), _check(94, need)], "H100", "full").text
    )
    assert "**No, it does not fit.**" in text and "**Yes, it fits.**" in text
    assert "That is 5.0 GiB short." in text and "That leaves 9.0 GiB to spare." in text


def test_a_fit_under_the_margin_is_called_tight() -> None:
    need = round(76 * GIB)
    check = _check(80, need).model_copy(update={"tight": True})
    text = _plain(compose_fit_answer("en", [check], "H100", "full").text)
    assert text.startswith(
        "**It fits, but tight.** Llama 3.1 8B (full fine-tuning) needs about **76.0 GiB per"
        " GPU**, against 80.0 GiB on your 1× H100. That leaves 4.0 GiB to spare. That is under"
        " the 10% margin the ranking keeps for the estimate's error: it may run out of memory."
    ), text
    german = _plain(compose_fit_answer("de", [check], "H100", "full").text)
    assert german.startswith("**Es passt, aber knapp.**") and "Reserve von 10" in german
