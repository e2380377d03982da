"""Answer composition: golden answers, every language, tools' English kept out, always grounded."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assistant.answers.compose import (
    compose_apology,
    compose_clarification,
    compose_fallback_notice,
    compose_grounding_notice,
    compose_guidance_answer,
    compose_job_answer,
    compose_too_long,
    compose_tool_error,
)
from assistant.answers.job import options_section
from assistant.answers.parts import Answer, Text, figures_in
from assistant.grounding.check import GroundingSources, check_grounding
from knowledge.retrieval import Passage
from tests.fakes.artifacts import make_estimate, make_excluded, make_option, make_ranking
from tools.advice import Assumed, JobNotice, ResolvedJob
from tools.errors import InvalidInputError, UnknownNameError
from tools.job import JOB_FIELDS, JobSpec, Money
from tools.languages import LANGUAGES
from tools.memory import EstimateInput, MemoryEstimate
from tools.ranking.models import ExclusionKind, RankResult
from tools.units import GIB

GOLDEN = Path(__file__).parent / "golden"


def passage(topic: str, lang: str, title: str, text: str, fallback: bool = False) -> Passage:
    return Passage(
        topic=topic,
        lang=lang,
        title=title,
        text=text,
        source=f"knowledge/docs/{lang}/{topic.replace('/', '__')}.md",
        score=0.03,
        chunk_id=f"{topic}#{lang}#0",
        query_lang=lang,
        lang_fallback=fallback,
    )


# ------------------------------------------------------------------------------ scenarios

# A: LoRA on one GPU; a spot option; defaults; a budget in EUR; one citation.
STATE_A = JobSpec(
    model="meta-llama/Llama-3.1-8B",
    method="lora",
    budget=Money(amount=500, currency="EUR"),
    spot="allowed",
)
PLAN_A = ResolvedJob(
    spec=STATE_A,
    estimate_input=EstimateInput(model="meta-llama/Llama-3.1-8B", method="lora"),
    assumed=[
        Assumed(field="precision", value="bf16-mixed", reason="stated"),
        Assumed(field="seq_len", value=2048, reason="stated"),
        Assumed(field="tokens", value=100_000_000, reason="stated"),
        Assumed(field="objective", value="cost", reason="stated"),
    ],
    notices=[
        JobNotice(
            kind="currency_converted",
            field="budget",
            value="500 EUR",
            message="budget 500 EUR converted to 558.60 USD at the ECB reference rate of"
            " 2026-10-30 (1.1172 USD per EUR)",
            usd=558.6,
            rate=1.1172,
            rate_date=date(2026, 10, 30),
        )
    ],
)
ESTIMATE_A = make_estimate()
RANKING_A = make_ranking(
    [
        make_option(1),
        make_option(
            2,
            instance_id="runpod/A100-80GB",
            provider="runpod",
            instance_type="A100 80GB SXM",
            gpu="A100-80GB-SXM",
            vram_per_gpu_bytes=80 * GIB,
            margin=80 / 21.73 - 1,
            pricing="spot",
            price_per_hour=0.89,
            hours=11.2,
            total_cost=9.97,
            compute_hours=9.9,
            on_demand_total_cost=16.23,
            spot_total_cost=9.97,
            spot_hours=11.2,
            checkpoint_interval_hours=0.42,
            mfu=0.41,
            peak_tflops_per_gpu=312.0,
            as_of=date(2025, 5, 20),
        ),
        make_option(
            3,
            instance_id="lambda/gpu_1x_h100_pcie",
            provider="lambda",
            instance_type="gpu_1x_h100_pcie",
            gpu="H100-PCIe",
            vram_per_gpu_bytes=80 * GIB,
            margin=80 / 21.73 - 1,
            price_per_hour=2.49,
            hours=4.1,
            total_cost=10.21,
            compute_hours=4.1,
            on_demand_total_cost=10.21,
            mfu=0.4,
            peak_tflops_per_gpu=756.5,
        ),
    ],
    spot_policy="allowed",
)
PASSAGES_A = [
    passage(
        "provider/spot-checkpoint-interval",
        "en",
        "How often to checkpoint on spot: the Young/Daly interval",
        "Checkpoint about every sqrt(2 x C x M).",
    )
]

# B: full fine-tune of a 70B model, ZeRO-3 on 16 GPUs over 2 nodes, and an offload option.
PLAN_B = ResolvedJob(
    spec=JobSpec(model="meta-llama/Llama-3.1-70B", method="full", num_gpus=16, zero_stage=3),
    estimate_input=EstimateInput(
        model="meta-llama/Llama-3.1-70B", method="full", num_gpus=16, zero_stage=3
    ),
)
ESTIMATE_B = make_estimate(
    weights=int(8.2 * GIB),
    gradients=int(8.2 * GIB),
    optimizer=int(49.3 * GIB),
    activations=int(3.1 * GIB),
    overhead=int(2.4 * GIB),
    total_gpus=16,
    name="Llama 3.1 70B",
)
_NEED_B = ESTIMATE_B.per_gpu.total
RANKING_B = make_ranking(
    [
        make_option(
            1,
            instance_id="aws/p5.48xlarge",
            provider="aws",
            instance_type="p5.48xlarge",
            gpu="H100-SXM",
            gpus_per_node=8,
            nodes=2,
            gpu_count=16,
            vram_per_gpu_bytes=80 * GIB,
            need_per_gpu_bytes=_NEED_B,
            margin=80 * GIB / _NEED_B - 1,
            plan="zero3",
            price_per_hour=196.64,
            hours=61.3,
            total_cost=12054.03,
            compute_hours=61.3,
            on_demand_total_cost=12054.03,
            mfu=0.31,
            peak_tflops_per_gpu=989.4,
        ),
        make_option(
            2,
            instance_id="gcp/a3-highgpu-8g",
            provider="gcp",
            instance_type="a3-highgpu-8g",
            gpu="H100-SXM",
            gpus_per_node=8,
            gpu_count=8,
            vram_per_gpu_bytes=80 * GIB,
            need_per_gpu_bytes=int(71.9 * GIB),
            margin=80 / 71.9 - 1,
            plan="zero3_offload",
            price_per_hour=88.25,
            hours=170.2,
            total_cost=15020.15,
            compute_hours=170.2,
            on_demand_total_cost=15020.15,
            mfu=0.22,
            peak_tflops_per_gpu=989.4,
        ),
    ],
    method="full",
    total_params=70_553_706_496,
    trainable_params=70_553_706_496,
)

# C: nothing fits; exclusions of four kinds.
RANKING_C = make_ranking(
    [],
    [
        *make_excluded("memory", 12),
        *make_excluded("budget", 5),
        *make_excluded("region", 5),
        *make_excluded("spot", 1),
    ],
)

SCENARIOS: dict[str, tuple[Any, ...]] = {
    "lora": (STATE_A, PLAN_A, ESTIMATE_A, RANKING_A, PASSAGES_A),
    "full_70b": (None, PLAN_B, ESTIMATE_B, RANKING_B, []),
    "nothing_fits": (STATE_A, PLAN_A, ESTIMATE_A, RANKING_C, []),
}


def _job_answer(lang: str, scenario: str) -> Answer:
    state, plan, estimate, ranking, passages = SCENARIOS[scenario]
    return compose_job_answer(lang, state, plan, estimate, ranking, passages)


def _sources(*artifacts: object) -> GroundingSources:
    return GroundingSources(artifacts=[a for a in artifacts if a is not None])


# ------------------------------------------------------------------------------ golden answers


@pytest.mark.parametrize(
    ("scenario", "lang"),
    [
        ("lora", "en"),
        ("lora", "de"),
        ("full_70b", "en"),
        ("full_70b", "tr"),
        ("nothing_fits", "en"),
        ("nothing_fits", "fr"),
    ],
)
def test_golden_job_answer(scenario: str, lang: str) -> None:
    expected = (GOLDEN / f"job_{scenario}_{lang}.md").read_text(encoding="utf-8").rstrip("\n")
    assert _job_answer(lang, scenario).text == expected, f"golden {scenario} answer in {lang}"


def test_golden_guidance_answer_with_language_fallback() -> None:
    passages = [
        passage("memory/moe", "en", "Mixture of experts", "All 8 experts stay in memory.", True),
        passage("faq/training-memory", "nl", "Hoeveel geheugen?", "..."),
        passage("faq/training-memory", "nl", "Hoeveel geheugen?", "... (tweede stuk)"),
    ]
    answer = compose_guidance_answer("nl", passages)
    assert answer.text == (
        "_Dit onderwerp is nog niet in het Nederlands geschreven; hier is het in het Engels._\n\n"
        "**Mixture of experts**\n\nAll 8 experts stay in memory.\n\n"
        "Zie ook: Hoeveel geheugen?\n\n"
        "**Bronnen**\n- Mixture of experts (Engels)\n- Hoeveel geheugen? (Nederlands)"
    ), "fallback flagged, see-also once per topic, sources listed"
    assert [(c.topic, c.lang) for c in answer.citations] == [
        ("memory/moe", "en"),
        ("faq/training-memory", "nl"),
    ], "one citation per topic and language"
    assert answer.numbers_shown == [8.0], "the passage's figure"


def test_guidance_without_passages_says_so() -> None:
    answer = compose_guidance_answer("es", [])
    assert answer.text.startswith("No he encontrado nada"), answer.text
    assert answer.citations == [], "nothing cited"


# ------------------------------------------------------------------------------ every language


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_composer_renders_in_every_language(lang: str) -> None:
    texts = [_job_answer(lang, name).text for name in SCENARIOS]
    texts.append(compose_guidance_answer(lang, PASSAGES_A).text)
    texts += [compose_clarification(lang, slot).text for slot in JOB_FIELDS]
    texts.append(compose_clarification(lang, "model", PASSAGES_A).text)
    texts += [
        compose_tool_error(lang, "lookup_gpu", UnknownNameError("GPU", "H200x", ["H200"])).text,
        compose_tool_error(lang, "estimate_memory", InvalidInputError("seq_len", 0, "1..")).text,
        compose_tool_error(lang, "unknown_tool", "boom").text,
        compose_apology(lang, "a1b2c3d4").text,
        compose_too_long(lang, 4000).text,
        compose_fallback_notice(lang),
        compose_grounding_notice(lang),
    ]
    for text in texts:
        assert text.strip(), f"{lang}: empty text"
        assert "{" not in text and "}" not in text, f"{lang}: unfilled placeholder in {text!r}"


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_job_answers_never_show_the_tools_english_lines(lang: str, scenario: str) -> None:
    _, plan, _, ranking, _ = SCENARIOS[scenario]
    text = _job_answer(lang, scenario).text
    english = [r for o in ranking.ranked for r in o.reasons]
    english += [e.reason for e in ranking.excluded] + [n.message for n in plan.notices]
    for line in english:
        assert line not in text, f"{lang}: tool text {line!r} in the answer"


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_job_answers_are_grounded_in_their_own_inputs(lang: str, scenario: str) -> None:
    state, plan, estimate, ranking, passages = SCENARIOS[scenario]
    answer = _job_answer(lang, scenario)
    report = check_grounding(answer.text, _sources(state, plan, estimate, ranking, *passages))
    assert report.grounded, f"{lang}/{scenario}: {report.ungrounded_numbers}"
    assert answer.numbers_shown == figures_in(answer.text, lang), "numbers_shown lists the figures"


# ------------------------------------------------------------------------------ behaviour


def test_caveats_follow_the_plan() -> None:
    lora_multi = make_ranking(
        [make_option(1, gpus_per_node=4, gpu_count=4, plan="ddp", pricing="spot")],
        method="lora",
    )
    text = compose_job_answer("en", None, None, None, lora_multi).text
    assert "NVLink" not in text, "no NVLink caveat for LoRA on several GPUs"
    assert "checkpoint regularly" in text, "spot without an interval still warns"
    full_multi = make_ranking(
        [make_option(1, gpus_per_node=4, gpu_count=4, plan="ddp")], method="full"
    )
    text = compose_job_answer("en", None, None, None, full_multi).text
    assert "With full fine-tuning on 4× L40S" in text, "multi-GPU full fine-tune caveat"
    assert "Things to watch" in text, "caveats heading"
    assert "each GPU holds the whole job (DDP)" in text and "ZeRO" not in text, (
        "replicas (a diffusion job's DDP) are not told to shard what they do not shard"
    )
    sharded = make_ranking(
        [make_option(1, gpus_per_node=4, gpu_count=4, plan="zero3")], method="full"
    )
    text = compose_job_answer("en", None, None, None, sharded).text
    assert "shard the states with ZeRO/FSDP" in text, "a sharded plan keeps the ZeRO advice"
    single = make_ranking([make_option(1)])
    assert "Things to watch" not in compose_job_answer("en", None, None, None, single).text


def test_at_most_three_options_are_shown() -> None:
    ranking = make_ranking([make_option(i) for i in range(1, 6)])
    text = compose_job_answer("en", None, None, None, ranking).text
    assert "3. **aws" in text and "4. **aws" not in text, "top three only"


def test_memory_summary_without_a_plan_names_no_method() -> None:
    estimate = make_estimate(total_gpus=8, cpu_offload=int(12 * GIB))
    text = compose_job_answer("en", None, None, estimate, None).text
    assert text == (
        "**Memory**\nLlama 3.1 8B needs about **21.7\u00a0GiB per GPU** on each of 8 GPUs. "
        "Largest parts: weights 15.0\u00a0GiB, activations 4.2\u00a0GiB, and CUDA context and "
        "buffers 1.9\u00a0GiB. A further 12.0\u00a0GiB of optimizer state per GPU is kept in CPU "
        "memory."
    ), "plan unknown: no method, generic setup, offloaded bytes"


def test_memory_summary_names_the_first_choice_when_it_runs_another_setup() -> None:
    best = make_option(
        1, gpus_per_node=8, gpu_count=8, gpu="H100-SXM", plan="zero3",
        need_per_gpu_bytes=int(41.83 * GIB), vram_per_gpu_bytes=80 * GIB,
    )  # fmt: skip
    text = compose_job_answer("es", None, PLAN_A, ESTIMATE_A, make_ranking([best])).text
    first = text.split("\n\n")[0]
    assert first.endswith(
        "La primera opción (8× H100-SXM, ZeRO-3/FSDP) necesita **41,8\u00a0GiB por GPU**."
    ), first
    same = compose_job_answer("es", None, PLAN_A, ESTIMATE_A, RANKING_A).text
    assert "La primera opción" not in same, "same setup as the estimate: no extra line"


def test_nothing_in_the_catalog() -> None:
    empty = RankResult(job=RANKING_C.job, ranked=[], excluded=[], considered=0, feasible=0)
    text = compose_job_answer("de", None, None, None, empty).text
    assert text == (
        "**Nichts passt**\nKeine Instanz im Katalog passt zu Ihren Filtern "
        "(GPU-Typ, Speicher pro GPU oder Region)."
    ), "empty catalog after filters"


@pytest.mark.parametrize(
    ("notice", "expected"),
    [
        (
            JobNotice(kind="invalid_value", field="seq_len", value="0", message="x"),
            "“0” is not a valid sequence length, so I used the default instead.",
        ),
        (
            JobNotice(kind="region_not_found", field="regions", value="mars", message="x"),
            "No region in the catalog matches “mars”, so I did not filter by region.",
        ),
        (
            JobNotice(
                kind="currency_not_applied", field="max_price_per_hour", value="2 ARS", message=""
            ),
            "Your hourly price cap is in ARS (2 ARS), a currency I have no exchange rate for, so"
            " I did not apply it. What is it in USD or EUR?",
        ),
    ],
)
def test_notices(notice: JobNotice, expected: str) -> None:
    text = compose_job_answer("en", None, None, None, None, notices=[notice]).text
    assert text == f"**Note**\n- {expected}", notice.kind


def test_clarification_asks_one_question() -> None:
    for lang in LANGUAGES:
        text = compose_clarification(lang, "model").text
        assert text.count("?") == 1, f"{lang}: one question: {text!r}"
    assert compose_clarification("de", "seq_len").text == (
        "Welchen Wert soll ich für „Sequenzlänge“ verwenden?"
    ), "generic question names the slot"
    mixed = compose_clarification("en", "model", PASSAGES_A)
    assert mixed.text.endswith("A name or a parameter count is enough."), "question last"
    assert mixed.citations[0].topic == "provider/spot-checkpoint-interval", "guidance cited"


@pytest.mark.parametrize(
    ("lang", "error", "expected"),
    [
        (
            "de",
            UnknownNameError("GPU", "H200x", ["H200", "H100-SXM"]),
            "Die GPU-Suche ist fehlgeschlagen: die GPU „H200x“ kenne ich nicht "
            "(am ähnlichsten: H200 und H100-SXM).",
        ),
        (
            "es",
            {"type": "InvalidInputError", "field": "seq_len", "value": 0, "message": "..."},
            "No he podido buscar la GPU: 0 no es un valor válido para longitud de secuencia.",
        ),
        (
            "tr",
            json.dumps({"error": {"type": "UnknownNameError", "kind": "model", "name": "x"}}),
            "GPU araması başarısız oldu: “x” adlı modeli tanımıyorum.",
        ),
        ("en", "catalog file unreadable", "I could not look up the GPU: catalog file unreadable"),
        ("nl", "catalog file unreadable", "Het lukte niet om de GPU op te zoeken."),
    ],
)
def test_tool_error_is_one_sentence_in_the_language(lang: str, error: Any, expected: str) -> None:
    assert compose_tool_error(lang, "lookup_gpu", error).text == expected, lang


def test_apology_too_long_and_notices() -> None:
    assert compose_apology("en", "3f9a12bc").text == (
        "Sorry, something went wrong on my side (error `3f9a12bc`). "
        "The conversation is kept; please try again."
    ), "apology with the error id"
    assert compose_too_long("de", 4000).text == (
        "Ihre Nachricht ist zu lang für mich: Bitte bleiben Sie unter 4.000 Zeichen."
    ), "limit in locale figures"
    assert compose_too_long("fr", 4000).numbers_shown == [4000.0], "the limit is a shown figure"
    for lang in LANGUAGES:
        for line in (compose_fallback_notice(lang), compose_grounding_notice(lang)):
            assert "\n" not in line and line.startswith("_"), f"{lang}: one italic line"


# ------------------------------------------------------------------------------ property

PLANS = ["single", "single_offload", "ddp", "zero2", "zero3", "zero3_offload"]
KINDS: list[ExclusionKind] = [
    "memory", "budget", "price", "deadline", "spot", "provider", "region", "gpu_count",
]  # fmt: skip
ASSUMED = [
    Assumed(field="method", value="qlora", reason="stated"),
    Assumed(field="optimizer", value="paged-adamw-8bit", reason="stated"),
    Assumed(field="lora_rank", value=16, reason="stated"),
    Assumed(field="micro_batch_size", value=4, reason="stated"),
    Assumed(field="gradient_checkpointing", value="full", reason="stated"),
    Assumed(field="epochs", value=1, reason="stated"),
    Assumed(field="spot", value="never", reason="stated"),
]


@st.composite
def options(draw: st.DrawFn, rank: int) -> Any:
    per_node = draw(st.sampled_from([1, 2, 4, 8]))
    nodes = draw(st.integers(1, 4)) if per_node == 8 else 1
    need = draw(st.integers(1 << 28, 1 << 38))
    vram = draw(st.sampled_from([16, 24, 40, 48, 80, 141])) * GIB
    spot = draw(st.booleans())
    money = st.floats(0.01, 2e6)
    return make_option(
        rank,
        gpus_per_node=per_node,
        nodes=nodes,
        gpu_count=per_node * nodes,
        vram_per_gpu_bytes=vram,
        need_per_gpu_bytes=need,
        margin=vram / need - 1,
        plan=draw(st.sampled_from(PLANS)),
        pricing="spot" if spot else "on-demand",
        price_per_hour=draw(st.floats(0.01, 900)),
        hours=draw(st.floats(0.01, 9000)),
        total_cost=draw(money),
        on_demand_total_cost=draw(money),
        spot_total_cost=draw(money) if spot else None,
        checkpoint_interval_hours=draw(st.none() | st.floats(0.01, 40)) if spot else None,
        mfu=draw(st.floats(0.01, 0.9)),
        peak_tflops_per_gpu=draw(st.floats(8, 2500)),
        as_of=draw(st.dates(date(2023, 1, 1), date(2027, 12, 31))),
    )


@st.composite
def job_artifacts(draw: st.DrawFn) -> tuple[JobSpec, ResolvedJob, MemoryEstimate, RankResult]:
    count = draw(st.integers(0, 4))
    ranked = [draw(options(rank)) for rank in range(1, count + 1)]
    kinds = draw(st.lists(st.sampled_from(KINDS), max_size=6))
    excluded = [e for kind in kinds for e in make_excluded(kind, 2)]
    ranking = make_ranking(
        ranked,
        excluded,
        method=draw(st.sampled_from(["pretrain", "full", "lora", "qlora"])),
        objective=draw(st.sampled_from(["cost", "time", "price"])),
    )
    part = st.integers(0, 1 << 38)
    estimate = make_estimate(
        weights=draw(part), gradients=draw(part), optimizer=draw(part),
        activations=draw(part), overhead=draw(part) + 1,
        total_gpus=draw(st.sampled_from([1, 2, 8, 16])), cpu_offload=draw(part),
    )  # fmt: skip
    budget = Money(amount=draw(st.floats(1, 1e6)), currency=draw(st.sampled_from(["EUR", "TRY"])))
    state = JobSpec(model="meta-llama/Llama-3.1-8B", budget=budget)
    notice = JobNotice(kind="currency_not_applied", field="budget", value="?", message="?")
    plan = PLAN_A.model_copy(
        update={
            "assumed": draw(st.lists(st.sampled_from(ASSUMED), unique=True)),
            "notices": [notice],
        }
    )
    return state, plan, estimate, ranking


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(job_artifacts(), st.sampled_from(LANGUAGES))
def test_compose_output_is_always_grounded_in_its_inputs(
    artifacts: tuple[JobSpec, ResolvedJob, MemoryEstimate, RankResult], lang: str
) -> None:
    state, plan, estimate, ranking = artifacts
    answer = compose_job_answer(lang, state, plan, estimate, ranking, PASSAGES_A)
    report = check_grounding(answer.text, _sources(state, plan, estimate, ranking, *PASSAGES_A))
    assert report.grounded, f"{lang}: {report.ungrounded_numbers} in\n{answer.text}"


def test_an_answer_reads_its_figures_only_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    """A composer that wraps an answer (a line of changes before it) never parses the inner
    one; the figures, read when asked or dumped, follow the text."""
    from assistant.answers import parts

    texts: list[str] = []

    def counting(text: str, lang: str | None = None) -> Any:
        texts.append(text)
        return real(text, lang)

    real = parts.shown_figures
    monkeypatch.setattr(parts, "shown_figures", counting)
    t = parts.Text("en")
    inner = t.answer(["**Memory** 22.1 GiB per GPU on 1 GPU; $0.44 per hour."])
    outer = t.answer(["**Changed:** 4096 tokens per sequence.", inner.text])
    assert texts == []
    assert outer.model_dump()["numbers_shown"] == [4096.0, 22.1, 1.0, 0.44]
    assert texts == [outer.text]
    assert outer.model_copy(update={"text": "9 GiB"}).numbers_shown == [9.0]


def test_an_on_demand_row_says_why_when_spot_was_allowed() -> None:
    """Issue 25, pattern 5: "actually use spot" showed on-demand rows without saying that they
    have no spot price (or that theirs costs more once interruptions are counted)."""
    dearer = make_option(1, spot_total_cost=11.5, spot_hours=6.1)
    rows = [dearer, make_option(2, instance_id="aws/x", instance_type="x")]
    allowed = options_section(Text("en"), make_ranking(rows, spot_policy="allowed"))
    assert "1× L40S, on demand (its spot price costs more once interruptions are counted)" in (
        allowed
    )
    assert "**aws x**: 1× L40S, on demand (no spot price listed)" in allowed
    never = options_section(Text("en"), make_ranking(rows, spot_policy="never"))
    assert "1× L40S, on demand\n" in never and "spot price" not in never


def test_a_tight_option_says_so_in_every_language() -> None:
    tight = make_option(1, need_per_gpu_bytes=45 * GIB, margin=48 / 45 - 1, tight=True)
    text = options_section(Text("en"), make_ranking([tight]))
    assert "TIGHT: needs 45.0 GiB of 48.0 GiB per GPU (only 7% to spare" in text.replace(
        "\xa0", " "
    ), text
    assert "it may run out of memory" in text
    for lang in ("nl", "fr", "tr", "de", "es"):
        local = options_section(Text(lang), make_ranking([tight]))
        assert local.split("   - ")[1].split(":")[0].strip("\xa0 ") in {
            "KRAP", "JUSTE", "SINIRDA", "KNAPP", "JUSTO"}, local  # fmt: skip
    roomy = options_section(Text("en"), make_ranking([make_option(1)]))
    assert "TIGHT" not in roomy
