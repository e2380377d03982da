"""Answers that weigh options against each other: a comparison of named GPUs side by side, and
why a GPU or provider is not the first choice (its rank and figures, or why it was left out).

Every figure is a field of a ranking (rank_instances artifacts), the memory estimate or the
user's own limits; no difference is computed here: both sides are shown.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from assistant.answers.parts import Answer, Text
from tools.job import JobSpec
from tools.memory import MemoryEstimate
from tools.ranking.models import RankedOption, RankResult

__all__ = ["Side", "compose_compare_answer", "compose_why_not_answer"]

_LIMIT_KINDS = ("price", "budget", "deadline")


@dataclass(frozen=True)
class Side:
    """One GPU (or provider) asked about, and the ranking restricted to it."""

    label: str
    ranking: RankResult | None


def _instance(option: RankedOption) -> str:
    return f"**{option.provider} {option.instance_type}**"


def _setup(t: Text, option: RankedOption) -> str:
    gpus = t.msg("options.gpus", count=t.count(option.gpu_count), gpu=option.gpu)
    return gpus if option.plan == "single" else f"{gpus}, {t.msg(f'plan.{option.plan}')}"


# What a side ranking (one GPU or provider) filters by itself: its exclusions for these rules
# are every other offer, not a reason the asked-for offers were left out.
_SIDE_FILTERS = ("gpu", "provider")


def _main_kind(ranking: RankResult, skip: Sequence[str] = ()) -> str | None:
    """The rule that left out the most offers (`skip`: rules not counted)."""
    kinds = Counter(item.kind for item in ranking.excluded if item.kind not in skip)
    return min(kinds, key=lambda k: (-kinds[k], k)) if kinds else None


def compose_compare_answer(lang: str, sides: Sequence[Side], model: str) -> Answer:
    """The best option per GPU as a table: fits?, setup, hours, total cost, price per hour."""
    t = Text(lang)
    head = [t.msg(f"compare.col.{c}") for c in ("gpu", "fits", "setup", "hours", "total", "price")]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    verdicts = []
    for side in sides:
        best = side.ranking.ranked[0] if side.ranking and side.ranking.ranked else None
        if best is None:
            why = _left_out_words(t, side.ranking)
            rows.append(f"| {side.label} | {t.msg('compare.fits_no')} | {why} | – | – | – |")
            continue
        cells = [side.label, t.msg("compare.fits_yes"), f"{best.provider} {best.instance_type}: "
                 f"{_setup(t, best)}", t.duration(best.hours), t.money(best.total_cost),
                 t.money(best.price_per_hour)]  # fmt: skip
        rows.append("| " + " | ".join(cells) + " |")
        verdicts.append((best.total_cost, side.label, best))
    blocks = [t.msg("compare.intro", model=model), "\n".join(rows)]
    if len(verdicts) > 1:
        _, label, best = min(verdicts, key=lambda v: v[0])
        blocks.append(t.msg("compare.cheapest", gpu=label, total=t.money(best.total_cost)))
    return t.answer(blocks)


def _left_out_words(t: Text, ranking: RankResult | None) -> str:
    if ranking is None or ranking.considered == 0 or not ranking.excluded:
        return t.msg("compare.not_in_catalog")
    kind = _main_kind(ranking, _SIDE_FILTERS)
    return t.msg(f"none.kind.{kind}") if kind else t.msg("compare.not_in_catalog")


def compose_why_not_answer(
    lang: str,
    target: str,
    main: RankResult,
    side: RankResult | None,
    relaxed: RankResult | None,
    state: JobSpec,
    estimate: MemoryEstimate | None,
) -> Answer:
    """Why `target` is not the first choice: its place and figures against the first choice,
    or the rule that left it out (with its best figures without the limit that excluded it)."""
    t = Text(lang)
    first = main.ranked[0] if main.ranked else None
    mine = side.ranked[0] if side is not None and side.ranked else None
    if mine is not None and first is not None:
        if mine.instance_id == first.instance_id:
            return t.answer([t.msg("why_not.is_first", target=target, instance=_instance(first))])
        place = next((o.rank for o in main.ranked if o.instance_id == mine.instance_id), None)
        head = (
            t.msg("why_not.ranked", target=target, rank=t.count(place))
            if place is not None
            else t.msg("why_not.ranked_lower", target=target)
        )
        return t.answer([head, _against(t, mine, first, main.job.objective)])
    kind = _main_kind(side, _SIDE_FILTERS) if side is not None and side.considered else None
    if kind is None:
        return t.answer([t.msg("why_not.not_in_catalog", target=target)])
    lines = [t.msg("why_not.left_out", target=target, reason=t.msg(f"none.kind.{kind}"))]
    lines.append(_limit_detail(t, kind, state, relaxed, estimate))
    if first is not None:
        total, hours = t.money(first.total_cost), t.duration(first.hours)
        lines.append(t.msg("why_not.first_is", instance=_instance(first), total=total, hours=hours))
    return t.answer([" ".join(line for line in lines if line)])


def _against(t: Text, mine: RankedOption, first: RankedOption, objective: str) -> str:
    return t.msg(
        f"why_not.against_{objective}",
        instance=_instance(mine),
        total=t.money(mine.total_cost),
        hours=t.duration(mine.hours),
        price=t.money(mine.price_per_hour),
        first=_instance(first),
        first_total=t.money(first.total_cost),
        first_hours=t.duration(first.hours),
        first_price=t.money(first.price_per_hour),
    )


def _limit_detail(
    t: Text,
    kind: str,
    state: JobSpec,
    relaxed: RankResult | None,
    estimate: MemoryEstimate | None,
) -> str:
    best = relaxed.ranked[0] if relaxed is not None and relaxed.ranked else None
    if kind in _LIMIT_KINDS and best is not None:
        limit = _limit(t, kind, state)
        return t.msg(f"why_not.detail.{kind}", limit=limit, instance=_instance(best),
                     price=t.money(best.price_per_hour), total=t.money(best.total_cost),
                     hours=t.duration(best.hours))  # fmt: skip
    if kind == "memory" and estimate is not None:
        return t.msg("why_not.detail.memory", need=t.gib(estimate.per_gpu.total))
    return t.msg(f"none.hint.{kind}")


def _limit(t: Text, kind: str, state: JobSpec) -> str:
    if kind == "deadline" and state.deadline_hours is not None:
        return t.hours(state.deadline_hours)
    money = state.max_price_per_hour if kind == "price" else state.budget
    return t.money(money.amount, money.currency) if money is not None else ""
