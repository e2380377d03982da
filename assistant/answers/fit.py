"""The answer to "is this enough?": the verdict per GPU size, the margin, the nearest ways to fit.

Every figure is a field of a `tools.fit.FitCheck` (the check_fit tool's artifact) or the user's
own message; the wording comes from the answer language's catalog.
"""

from __future__ import annotations

from collections.abc import Sequence

from assistant.answers.job import defaults_line
from assistant.answers.parts import Answer, Text
from tools.fit import FitCheck, FitWay

__all__ = ["compose_fit_answer"]

MAX_WAYS = 5


def compose_fit_answer(
    lang: str, checks: Sequence[FitCheck], gpu: str | None, method: str | None
) -> Answer:
    """One verdict per memory size checked (`gpu` names the card when the user named one;
    sizes with the same verdict share one), each with its margin, then the nearest ways to fit
    for the first that does not fit."""
    t = Text(lang)
    blocks = [_verdict(t, same, gpu, method) for same in _alike(checks)]
    failing = next((c for c in checks if not c.fits), None)
    ways = failing.ways if failing is not None else []
    if ways:
        lines = [_way(t, way, failing) for way in ways[:MAX_WAYS] if failing is not None]
        blocks.append(f"**{t.msg('fit.ways_heading')}**\n" + "\n".join(f"- {x}" for x in lines))
    elif failing is not None:
        blocks.append(t.msg("fit.no_way"))
    if checks:  # the defaults the check used, from its own result
        blocks.append(defaults_line(t, checks[0].assumed))
    return t.answer(blocks)


def _hardware(t: Text, check: FitCheck, gpu: str | None) -> str:
    if gpu:
        return t.msg("fit.hardware_gpu", count=t.count(check.gpu_count), gpu=gpu)
    return t.plural("fit.hardware_size", check.gpu_count)


def _alike(checks: Sequence[FitCheck]) -> list[list[FitCheck]]:
    """The checks in order, those with the same verdict, need and GPU count together (a GPU
    sold in two sizes, an 80 and a 94 GiB H100, gets one verdict naming both)."""
    groups: dict[tuple[bool, bool, int, int], list[FitCheck]] = {}
    for check in checks:
        key = (check.fits, check.tight, check.need_bytes, check.gpu_count)
        groups.setdefault(key, []).append(check)
    return list(groups.values())


def _verdict(t: Text, same: Sequence[FitCheck], gpu: str | None, method: str | None) -> str:
    check = same[0]
    sizes = sorted({c.vram_bytes for c in same})
    vram = t.gib(sizes[0])
    for size in sizes[1:]:
        vram = t.msg("fit.either", first=vram, second=t.gib(size))
    method_word = t.label("method", str(check.settings.get("method", method or "")))
    key = "fit.verdict_no" if not check.fits else "fit.verdict_yes"
    if check.tight:
        key = "fit.verdict_tight"
    head = t.msg(
        key,
        model=t.model(check.model_name, check.model_id),
        method=method_word,
        hardware=_hardware(t, check, gpu),
        need=t.gib(check.need_bytes),
        vram=vram,
    )
    margins = sorted({abs(c.spare_bytes) for c in same})
    amount = t.gib(margins[0])
    if len(margins) > 1:
        amount = t.msg("fit.amount_range", low=amount, high=t.gib(margins[-1]))
    margin = t.msg("fit.spare" if check.fits else "fit.short", amount=amount)
    if check.tight:
        margin += " " + t.msg("fit.tight", margin=t.percent(check.margin))
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
