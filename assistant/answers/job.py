"""The sections of a job answer: memory, recommended instances, caveats, nothing-fits, defaults
and notices. Every figure is formatted from a tool artifact or the job state; every sentence comes
from the message catalog of the answer's language. The rankers' own `reasons` are English lines,
so the "why" of each option is rebuilt here from the option's structured fields instead.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from assistant.answers.literal import as_text
from assistant.answers.parts import Text
from tools.advice import Assumed, JobNotice, ResolvedJob
from tools.gpus import lookup_gpu
from tools.job import JobSpec, Money
from tools.memory import EstimateInput, MemoryEstimate
from tools.ranking.models import RankedOption, RankResult
from tools.ranking.plans import PLAN_ORDER, is_offload, is_sharded

__all__ = [
    "caveats_section",
    "defaults_line",
    "memory_section",
    "nothing_fits_section",
    "notices_section",
    "options_section",
]

TOP_OPTIONS = 3
TOP_EXCLUSION_KINDS = 3
_COMPONENTS = ("weights", "gradients", "optimizer", "activations", "overhead")
_FULL_METHODS = ("full", "pretrain")
_COUNT_FIELDS = ("lora_rank", "seq_len", "micro_batch_size", "num_gpus", "tokens", "samples",
                 "gradient_accumulation_steps", "tensor_parallel", "min_gpus", "max_gpus",
                 "max_nodes")  # fmt: skip


def _bullets(items: Sequence[str]) -> str:
    return "\n".join(f"- {item}" for item in items if item)


def _section(t: Text, heading_key: str, body: str) -> str:
    return f"**{t.msg(heading_key)}**\n{body}" if body else ""


def _instance(option: RankedOption) -> str:
    return f"**{option.provider} {option.instance_type}**"


# ------------------------------------------------------------------------------ memory


def memory_section(
    t: Text, estimate: MemoryEstimate, job: EstimateInput | None, ranking: RankResult | None
) -> str:
    """Per-GPU total under the estimate's setup, its three largest parts, CPU offload."""
    per_gpu = estimate.per_gpu
    total, setup = t.gib(per_gpu.total), _setup(t, estimate, job, ranking)
    method = job.method if job else ranking.job.method if ranking else None
    precision = job.precision if job else ranking.job.precision if ranking else None
    if method is not None and precision is not None:
        summary = t.msg(
            "memory.summary",
            model=t.model(estimate.model_name, estimate.model_id),
            method=t.label("method", method),
            precision=t.label("precision", precision),
            total=total,
            setup=setup,
        )
    else:
        model = t.model(estimate.model_name, estimate.model_id)
        summary = t.msg("memory.summary_bare", model=model, total=total, setup=setup)
    parts = sorted(((getattr(per_gpu, c), c) for c in _COMPONENTS), reverse=True)
    largest = [
        t.msg("memory.part", name=t.msg(f"memory.component.{name}"), size=t.gib(size))
        for size, name in parts[:3]
        if size > 0
    ]
    lines = [summary, t.msg("memory.largest", parts=t.listing(largest))]
    if estimate.cpu_offload_bytes > 0:
        lines.append(t.msg("memory.offload", size=t.gib(estimate.cpu_offload_bytes)))
    best = ranking.ranked[0] if ranking and ranking.ranked else None
    if best is not None and _other_setup(estimate, job, best):
        gpus = t.msg("options.gpus", count=t.count(best.gpu_count), gpu=best.gpu)
        need = t.gib(best.need_per_gpu_bytes)
        lines.append(t.msg("memory.chosen", gpus=gpus, plan=t.msg(f"plan.{best.plan}"), need=need))
    return _section(t, "memory.heading", " ".join(lines))


def _setup(
    t: Text, estimate: MemoryEstimate, job: EstimateInput | None, ranking: RankResult | None
) -> str:
    gpus = estimate.total_gpus
    if gpus == 1:
        return t.msg("memory.setup_single")
    plan = _estimate_plan(estimate, job, ranking)
    if plan is None:
        return t.plural("memory.setup_multi_plain", gpus)
    return t.plural("memory.setup_multi", gpus, plan=t.msg(f"plan.{plan}"))


def _estimate_plan(
    estimate: MemoryEstimate, job: EstimateInput | None, ranking: RankResult | None
) -> str | None:
    """The plan the estimate was made for: the best option's when it is that option's own
    estimate, else the one the job input describes; None when neither is known."""
    if ranking and ranking.ranked:
        best = ranking.ranked[0]
        same_total = best.need_per_gpu_bytes == estimate.figures.required
        if same_total and best.gpu_count == estimate.total_gpus:
            return best.plan
    if estimate.total_gpus == 1:
        return "single_offload" if estimate.cpu_offload_bytes > 0 else "single"
    if job is None or job.num_gpus * job.tensor_parallel != estimate.total_gpus:
        return None
    stage, offload = job.zero_stage, job.offload_optimizer
    if offload:
        return "zero3_offload" if stage == 3 else "zero_offload"
    return ("ddp", "zero1", "zero2", "zero3")[stage]


def _other_setup(estimate: MemoryEstimate, job: EstimateInput | None, best: RankedOption) -> bool:
    """The best option runs the job on another GPU count or plan than the estimate assumed."""
    plan = _estimate_plan(estimate, job, None)
    return best.gpu_count != estimate.total_gpus or plan not in (None, best.plan)


# ------------------------------------------------------------------------------ options


def options_section(t: Text, ranking: RankResult) -> str:
    """The best options, each with fit, run time and cost, and why it was chosen."""
    shown = ranking.ranked[:TOP_OPTIONS]
    spot = ranking.job.spot_policy != "never"
    items = [_option(t, option, shown[0], ranking.job.objective, spot) for option in shown]
    return _section(t, "options.heading", "\n".join(items))


def _pricing(t: Text, option: RankedOption, spot_asked: bool) -> str:
    """'on demand', 'spot'; where spot was allowed, why a row is on demand (issue 25: "actually
    use spot" showed on-demand rows without saying they have no spot price)."""
    if option.pricing == "on-demand" and spot_asked:
        return t.msg("options.no_spot" if option.spot_total_cost is None else "options.spot_dearer")
    return t.msg(f"pricing.{option.pricing}")


def _option(
    t: Text, option: RankedOption, first: RankedOption, objective: str, spot_asked: bool = False
) -> str:
    gpus = t.msg("options.gpus", count=t.count(option.gpu_count), gpu=option.gpu)
    if option.nodes > 1:
        nodes = t.plural("options.nodes", option.nodes)
        gpus = t.msg("options.gpus_on_nodes", gpus=gpus, nodes=nodes)
    what = [gpus] if option.plan == "single" else [gpus, t.msg(f"plan.{option.plan}")]
    head = t.msg(
        "options.item",
        provider=option.provider,
        instance_type=option.instance_type,
        setup=", ".join(what),
        pricing=_pricing(t, option, spot_asked),
    )
    details = [_fit(t, option), _run(t, option), _why(t, option, first, objective)]
    body = "\n".join(f"   - {line}" for line in details)
    return f"{option.rank}. {head}\n{body}"


def _fit(t: Text, option: RankedOption) -> str:
    return t.msg(
        "options.fit_tight" if option.tight else "options.fit",
        need=t.gib(option.need_per_gpu_bytes),
        vram=t.gib(option.vram_per_gpu_bytes),
        spare=t.percent(option.margin),
    )


def _run(t: Text, option: RankedOption) -> str:
    figures = {
        "hours": t.duration(option.hours),
        "price": t.money(option.price_per_hour),
        "total": t.money(option.total_cost),
    }
    if option.pricing == "spot":
        on_demand = t.money(option.on_demand_total_cost)
        return t.msg("options.run_spot", on_demand=on_demand, **figures)
    return t.msg("options.run", **figures)


def _why(t: Text, option: RankedOption, first: RankedOption, objective: str) -> str:
    """Reasons from the option's fields: its place by the objective (or what it does better
    than the first choice), spot, the utilisation behind its speed, and the price date."""
    if option is first:
        reasons = [t.msg(f"options.reason.best_{objective}")]
    else:
        reasons = [t.msg(f"options.reason.{k}") for k in _better_than(option, first)]
        reasons = reasons or [t.msg("options.reason.runner_up")]
    if option.pricing == "spot":
        reasons.append(t.msg("options.reason.spot"))
    reasons.append(
        t.msg(
            "options.reason.speed",
            mfu=t.percent(option.mfu),
            peak=t.number(
                option.peak_tflops_per_gpu, 0 if option.peak_tflops_per_gpu >= 100 else 1
            ),
        )
    )
    reasons.append(t.msg("options.reason.as_of", date=t.date(option.as_of)))
    return t.msg("options.why", reasons=t.join(reasons))


def _better_than(option: RankedOption, first: RankedOption) -> list[str]:
    checks = {
        "faster": option.hours < first.hours,
        "cheaper_hourly": option.price_per_hour < first.price_per_hour,
        "more_headroom": option.margin > first.margin,
        "fewer_gpus": option.gpu_count < first.gpu_count,
        "simpler_plan": PLAN_ORDER[option.plan] < PLAN_ORDER[first.plan],
    }
    return [name for name, holds in checks.items() if holds]


# ------------------------------------------------------------------------------ caveats


def caveats_section(t: Text, ranking: RankResult) -> str:
    """Caveats tied to the plans shown: spot checkpoints, multi-GPU full fine-tuning, CPU
    offload, multi-node runs (each once, for the first option it concerns)."""
    shown = ranking.ranked[:TOP_OPTIONS]
    lines: list[str] = []
    spot = next((o for o in shown if o.pricing == "spot"), None)
    if spot is not None:
        if spot.checkpoint_interval_hours:
            interval = t.duration(spot.checkpoint_interval_hours)
            lines.append(t.msg("caveats.spot", instance=_instance(spot), interval=interval))
        else:
            lines.append(t.msg("caveats.spot_no_interval", instance=_instance(spot)))
    multi = next((o for o in shown if o.gpu_count > 1), None)
    if multi is not None and ranking.job.method in _FULL_METHODS:
        gpus = t.msg("options.gpus", count=t.count(multi.gpu_count), gpu=multi.gpu)
        method = t.label("method", ranking.job.method)
        if not is_sharded(multi.plan):  # replicas (DDP), e.g. a diffusion job: no states to shard
            key = "caveats.multi_gpu_replicated"
        elif _vendor(multi) == "AMD":
            key = "rec.multi_gpu_full_amd"
        else:
            key = "caveats.multi_gpu_full"
        lines.append(t.msg(key, method=method, gpus=gpus))
    offload = next((o for o in shown if is_offload(o.plan)), None)
    if offload is not None:
        lines.append(t.msg("caveats.offload", instance=_instance(offload)))
        lines.append(_host_ram(t, offload))
    lines += recommendation_notes(t, ranking)
    multi_node = next((o for o in shown if o.nodes > 1), None)
    if multi_node is not None:
        nodes = t.plural("options.nodes", multi_node.nodes)
        lines.append(t.msg("caveats.multi_node", instance=_instance(multi_node), nodes=nodes))
    return _section(t, "caveats.heading", _bullets(lines))


# Providers whose offers are a marketplace of hosts: prices and availability move by the hour.
MARKETPLACES = frozenset({"vast", "tensordock"})


def _vendor(option: RankedOption) -> str:
    return lookup_gpu(option.gpu).vendor


def _host_ram(t: Text, option: RankedOption) -> str:
    if option.host_ram_need_bytes is None:
        return ""
    need = t.gib(option.host_ram_need_bytes)
    if option.host_ram_bytes is None:
        return t.msg("rec.offload_ram_unknown", instance=_instance(option), need=need)
    key = "rec.offload_ram" if option.host_ram_bytes >= option.host_ram_need_bytes else (
        "rec.offload_ram_short")  # fmt: skip
    return t.msg(key, instance=_instance(option), need=need, ram=t.gib(option.host_ram_bytes))


def _stale_notes(t: Text, stale: Sequence[RankedOption]) -> list[str]:
    """One note per provider whose shown prices are stale, dated by its oldest price; a
    provider with one such option names the instance."""
    by_provider: dict[str, list[RankedOption]] = {}
    for option in stale:
        by_provider.setdefault(option.provider, []).append(option)
    lines: list[str] = []
    for provider, options in by_provider.items():
        oldest = min(options, key=lambda o: o.as_of)
        values = {"date": t.date(oldest.as_of), "days": t.count(oldest.price_age_days or 0)}
        if len(options) == 1:
            lines.append(t.msg("rec.stale", instance=_instance(oldest), **values))
        else:
            count = t.count(len(options))
            lines.append(t.msg("rec.stale_provider", provider=provider, count=count, **values))
    return lines


def recommendation_notes(t: Text, ranking: RankResult) -> list[str]:
    """What a senior engineer adds about the options shown: fp16 on GPUs without bf16, the ROCm
    caveat of AMD GPUs, stale and marketplace prices (each once)."""
    shown = ranking.ranked[:TOP_OPTIONS]
    lines: list[str] = []
    if ranking.job.precision.startswith("bf16"):
        no_bf16 = [o.gpu for o in shown if not lookup_gpu(o.gpu).bf16]
        lines += [t.msg("rec.fp16", gpu=gpu) for gpu in dict.fromkeys(no_bf16)]
    amd = next((o for o in shown if _vendor(o) == "AMD"), None)
    if amd is not None:
        key = "rec.amd_qlora" if ranking.job.method == "qlora" else "rec.amd"
        lines.append(t.msg(key, gpu=amd.gpu))
    lines += _stale_notes(t, [o for o in shown if o.stale])
    market = next((o for o in shown if o.provider in MARKETPLACES), None)
    if market is not None:
        lines.append(t.msg("rec.marketplace", instance=_instance(market)))
    return lines


# ------------------------------------------------------------------------------ nothing fits


def nothing_fits_section(t: Text, ranking: RankResult) -> str:
    """No option: how many instances were considered, the main reasons by kind, one hint."""
    if ranking.considered == 0:
        return _section(t, "none.heading", t.msg("none.empty"))
    kinds = Counter(item.kind for item in ranking.excluded)
    order = sorted(kinds, key=lambda k: (-kinds[k], k))[:TOP_EXCLUSION_KINDS]
    lines = [t.plural("none.text", ranking.considered)]
    if order:
        reasons = t.join([t.msg(f"none.kind.{kind}") for kind in order])
        lines += [t.msg("none.reasons", reasons=reasons), t.msg(f"none.hint.{order[0]}")]
    return _section(t, "none.heading", " ".join(lines))


# ------------------------------------------------------------------------------ defaults, notices


def defaults_line(t: Text, assumed: Sequence[Assumed]) -> str:
    """The defaults assumed for open fields, in one line."""
    if not assumed:
        return ""
    items = [
        t.msg(
            "defaults.item", field=t.label("field", d.field), value=field_value(t, d.field, d.value)
        )
        for d in assumed
    ]
    return t.msg("defaults.line", items=t.join(items))


def field_value(t: Text, name: str, value: object) -> str:
    """A job field's value in words or locale figures."""
    if isinstance(value, bool):
        return t.msg("value.bool_yes" if value else "value.bool_no")
    if isinstance(value, Money):
        return t.money(value.amount, value.currency)
    words = {
        "method": "method.",
        "precision": "precision.",
        "spot": "value.spot_",
        "objective": "value.objective_",
        "gradient_checkpointing": "value.checkpointing_",
    }
    if name in words and isinstance(value, str):
        group, _, prefix = words[name].partition(".")
        return t.label(group, f"{prefix}{value}")
    if isinstance(value, int | float) and not isinstance(value, bool):
        if name == "deadline_hours":
            return t.hours(value)
        if name in ("max_vram_gib", "cuda_context_gib"):
            return f"{t.number(value)}\u00a0GiB"
        if name == "resolution":  # an image side: no thousands separator
            return f"{int(value)}\u00a0px"
        if name in _COUNT_FIELDS or float(value).is_integer():
            return t.count(value)
        return t.number(value)
    if isinstance(value, list):
        return t.listing([as_text(str(v)) for v in value])
    return as_text(str(value))  # names a user wrote (providers, regions, GPUs): shown as text


def notices_section(t: Text, notices: Sequence[JobNotice], state: JobSpec | None) -> str:
    """What the job resolution did not apply as asked, each in the answer's language."""
    lines = [_notice(t, notice, state) for notice in notices]
    return _section(t, "notice.heading", _bullets(lines))


def _notice(t: Text, notice: JobNotice, state: JobSpec | None) -> str:
    field = t.label("field", notice.field)
    if notice.kind == "currency_converted" and notice.usd is not None and notice.rate:
        money = getattr(state, notice.field, None) if state is not None else None
        currency = money.currency if isinstance(money, Money) else notice.value.rsplit(" ", 1)[-1]
        shown = (
            t.money(money.amount, money.currency)
            if isinstance(money, Money)
            else as_text(notice.value)
        )
        return t.msg(
            "money.converted", field=field, money=shown, usd=t.money(notice.usd),
            rate=t.number(notice.rate, 4), currency=currency,
            date=t.date(notice.rate_date) if notice.rate_date else "",
        )  # fmt: skip
    if notice.kind == "currency_not_applied":
        money = getattr(state, notice.field, None) if state is not None else None
        if isinstance(money, Money):
            shown, currency = t.money(money.amount, money.currency), str(money.currency)
        else:
            shown, currency = as_text(notice.value), notice.value.rsplit(" ", 1)[-1]
        return t.msg("notice.currency_not_applied", field=field, currency=currency, money=shown)
    return t.msg(f"notice.{notice.kind}", field=field, value=as_text(notice.value))


def plan_input(plan: ResolvedJob | None) -> EstimateInput | None:
    return plan.estimate_input if plan is not None else None
