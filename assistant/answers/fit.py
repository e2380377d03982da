"""The answer to "is this enough?": the verdict per GPU size, the margin, the nearest ways to fit.

Every figure is a field of a `tools.fit.FitCheck` (the check_fit tool's artifact) or the user's
own message; the wording comes from the answer language's catalog.
"""

from __future__ import annotations

from collections.abc import Sequence

from assistant.answers.parts import Answer, Text
from tools.fit import FitCheck, FitWay

__all__ = ["compose_fit_answer"]

MAX_WAYS = 5


def compose_fit_answer(
    lang: str, checks: Sequence[FitCheck], gpu: str | None, method: str | None
) -> Answer:
    """One verdict per memory size checked (`gpu` names the card when the user named one),
    each with its margin, then the nearest ways to fit for the first that does not fit."""
    t = Text(lang)
    blocks = [_verdict(t, check, gpu, method) for check in checks]
    failing = next((c for c in checks if not c.fits), None)
    ways = failing.ways if failing is not None else []
    if ways:
        lines = [_way(t, way, failing) for way in ways[:MAX_WAYS] if failing is not None]
        blocks.append(f"**{t.msg('fit.ways_heading')}**\n" + "\n".join(f"- {x}" for x in lines))
    elif failing is not None:
        blocks.append(t.msg("fit.no_way"))
    return t.answer(blocks)


def _hardware(t: Text, check: FitCheck, gpu: str | None) -> str:
    if gpu:
        return t.msg("fit.hardware_gpu", count=t.count(check.gpu_count), gpu=gpu)
    return t.plural("fit.hardware_size", check.gpu_count)


def _verdict(t: Text, check: FitCheck, gpu: str | None, method: str | None) -> str:
    method_word = t.label("method", str(check.settings.get("method", method or "")))
    key = "fit.verdict_yes" if check.fits else "fit.verdict_no"
    head = t.msg(
        key,
        model=t.model(check.model_name, check.model_id),
        method=method_word,
        hardware=_hardware(t, check, gpu),
        need=t.gib(check.need_bytes),
        vram=t.gib(check.vram_bytes),
    )
    margin_key = "fit.spare" if check.fits else "fit.short"
    margin = t.msg(margin_key, amount=t.gib(abs(check.spare_bytes)))
    return f"{head} {margin}"


def _way(t: Text, way: FitWay, check: FitCheck) -> str:
    values = {
        "seq_len": t.count(way.settings.get("seq_len", 0)),
        "steps": t.count(way.settings.get("gradient_accumulation_steps", 0)),
        "batch": t.count(way.settings.get("micro_batch_size", 0)),
        "gpus": t.count(check.gpu_count),
    }
    what = t.msg(f"fit.way.{way.change}", **values)
    mark = t.msg("fit.fits" if way.fits else "fit.still_short")
    return t.msg("fit.way_line", change=what, need=t.gib(way.need_bytes), verdict=mark)
