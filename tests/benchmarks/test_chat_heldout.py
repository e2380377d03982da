"""The held-out conversations (benchmarks/chat_heldout): well formed, and never seen by the
router's bank or the dev corpus (the set measures generalisation, so nothing may be tuned on it);
the loader, the runner on a tiny fixture through the real offline assistant, and each answer
shape on hand-made results."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from assistant.agent.conversation import Assistant
from assistant.answers.i18n import message
from assistant.extract.routing import INTENTS
from assistant.extract.routing.bank import examples
from assistant.settings import Settings
from benchmarks.chat_heldout.run import (
    CONVERSATIONS,
    FRESH,
    FROZEN,
    RATES,
    SUPPORTED,
    conversations,
    messages,
    run,
)
from benchmarks.chat_heldout.shapes import KINDS, missing_kinds
from benchmarks.chat_intents import rows
from tests.fakes.app import TinyKnowledge
from tools.catalog import builtin_catalog
from tools.job import JobSpec

FROZEN2 = FROZEN.with_name("frozen_1208.yaml")  # the fourth, scored once (2026-12-08)


def _key(text: str) -> str:
    """Case, spacing and punctuation set aside: "Why not the H100?" is "why not the h100"."""
    return " ".join(re.sub(r"[^\w\s]", " ", text.casefold()).split())


SETS = pytest.mark.parametrize(
    "path", [CONVERSATIONS, FRESH, FROZEN, FROZEN2], ids=lambda p: p.stem
)


@SETS
def test_no_heldout_message_is_in_the_bank_or_the_dev_corpus(path: Path) -> None:
    seen = {_key(text) for _, _, text in examples()} | {_key(r["text"]) for r in rows()}
    shared = [text for text in messages(path) if _key(text) in seen]
    assert not shared, f"held-out messages also in the bank or the dev corpus: {shared}"


def test_the_heldout_sets_share_no_message() -> None:
    first = {_key(text) for text in messages(CONVERSATIONS)}
    assert not [text for text in messages(FRESH) if _key(text) in first]
    earlier = first | {_key(text) for text in messages(FRESH)}
    assert not [text for text in messages(FROZEN) if _key(text) in earlier]
    earlier |= {_key(text) for text in messages(FROZEN)}
    assert not [text for text in messages(FROZEN2) if _key(text) in earlier]


@pytest.mark.parametrize(
    ("path", "least"),
    [
        (CONVERSATIONS, (60, 150, 8, 2)),
        (FRESH, (30, 60, 4, 1)),
        (FROZEN, (24, 150, 4, 0)),
        (FROZEN2, (30, 180, 5, 0)),
    ],
    ids=["first", "fresh", "frozen", "frozen2"],
)
def test_heldout_size_languages_and_labels(path: Path, least: tuple[int, int, int, int]) -> None:
    convs = conversations(path)
    turns = [turn for conv in convs for turn in conv["turns"]]
    assert len(convs) >= least[0], len(convs)
    assert len(turns) >= least[1], len(turns)
    langs = Counter(conv["lang"] for conv in convs)
    assert all(langs[lang] >= least[2] for lang in SUPPORTED), langs
    assert langs["it"] >= least[3] and langs["pt"] >= least[3], langs
    assert {turn["intent"] for turn in turns} == set(INTENTS)
    assert len({conv["id"] for conv in convs}) == len(convs), "conversation ids are unique"
    for turn in turns:
        assert turn["intent"] in INTENTS, turn
        assert turn["answer"] in SUPPORTED, turn
        spec = JobSpec.model_validate(turn["state"])  # every expected state is a valid job
        assert spec.model_dump(mode="json", exclude_none=True) == turn["state"], turn["text"]


@SETS
def test_every_turn_expects_known_kinds_with_well_formed_details(path: Path) -> None:
    for conv in conversations(path):
        for turn in conv["turns"]:
            assert turn["expect"] and set(turn["expect"]) <= set(KINDS), turn
            if "hardware" in turn:
                assert "fit" in turn["expect"] and turn["hardware"]["gpus"] >= 1, turn
                assert all(size > 0 for size in turn["hardware"]["gib"]), turn
            if "gpus" in turn:
                assert "compare" in turn["expect"] and len(turn["gpus"]) >= 2, turn
            if "target" in turn:
                assert "why_not" in turn["expect"], turn


# --------------------------------------------------------------------------- loader and runner

FIXTURE = """
conversations:
- id: en-two
  lang: en
  turns:
  - text: "QLoRA on llama 3.1 8b, 100M tokens"
    intent: job
    state: {model: meta-llama/Llama-3.1-8B, method: qlora, tokens: 100000000.0}
    expect: [ranking]
  - text: "is my 4090 enough for it?"
    intent: fit_check
    state: {model: meta-llama/Llama-3.1-8B, method: qlora, tokens: 100000000.0}
    expect: [fit]
    hardware: {gpus: 1, gib: [24]}
- id: it-one
  lang: it
  turns:
  - text: "ciao"
    intent: out_of_scope
    state: {}
    expect: [scope]
"""


@pytest.fixture(scope="module")
def fixture_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    path = tmp_path_factory.mktemp("heldout") / "conversations.yaml"
    path.write_text(FIXTURE, "utf-8")
    settings = Settings(data_dir=tmp_path_factory.mktemp("data"), llm=None)
    assistant = Assistant(settings, knowledge=TinyKnowledge(), catalog=builtin_catalog())
    return run(assistant, conversations(path), rounds=1)


def test_loader_answers_an_unsupported_language_in_english(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(FIXTURE, "utf-8")
    convs = conversations(path)
    assert [c["id"] for c in convs] == ["en-two", "it-one"]
    assert [t["answer"] for c in convs for t in c["turns"]] == ["en", "en", "en"]


def test_runner_scores_each_turn_against_its_labels(fixture_report: dict[str, Any]) -> None:
    """Two turns labelled right, one labelled wrong on purpose: "ciao" is small talk, answered
    with the introduction, so its intent and its shape (scope) miss, its slots and language hold."""
    report = fixture_report
    assert (report["conversations"], report["turns"]) == (2, 3)
    en, it = report["per_language"]["en"], report["per_language"]["it"]
    assert {k: en[k] for k in RATES} == dict.fromkeys(RATES, 1.0)
    assert {k: it[k] for k in RATES} == {"intent": 0.0, "slots": 1.0, "shape": 0.0,
                                         "language": 1.0, "grounded": 1.0, "full": 0.0}  # fmt: skip
    assert report["overall"]["full"] == pytest.approx(2 / 3, abs=1e-3), (
        "a turn right on every check"
    )
    assert report["end_to_end"] == {"all": 1, "en": "1/1", "it": "0/1"}
    assert report["confusion"]["out_of_scope -> small_talk"] == 1, "the mislabelled ciao"
    assert report["out_of_scope"] == {"precision": 1.0, "recall": 0.0}
    assert report["overall"]["intent"] == pytest.approx(2 / 3, abs=1e-3)
    assert report["overall"]["shape"] == pytest.approx(2 / 3, abs=1e-3)
    assert set(report["per_intent"]) == {"job", "fit_check", "out_of_scope"}
    assert report["per_intent"]["out_of_scope"]["intent"] == 0.0
    assert report["per_intent"]["fit_check"]["shape"] == 1.0
    assert [e.split(" ")[0] for e in report["errors"]] == ["intent", "shape"]
    assert "small_talk (want out_of_scope)" in report["errors"][0]
    assert "missing ['scope']" in report["errors"][1]
    assert report["per_language"]["en"]["p50_ms"] > 0  # one timed round ran


# --------------------------------------------------------------------------- shapes


def _call(name: str, args: dict[str, Any], result: Any = None) -> SimpleNamespace:
    return SimpleNamespace(name=name, args=args, result=result, status="success")


_RANKED = {"ranked": [{"instance_id": "vast/8x-RTX_3090"}]}


def _result(answer: str, calls: list[SimpleNamespace], citations: int = 0) -> SimpleNamespace:
    return SimpleNamespace(answer=answer, tool_calls=calls, citations=[object()] * citations,
                           language="en")  # fmt: skip


def test_ranking_needs_the_first_choice_as_item_one_or_the_nothing_fits_heading() -> None:
    calls = [_call("estimate_memory", {}), _call("rank_instances", {}, _RANKED)]
    turn = {"expect": ["ranking"]}
    assert missing_kinds(turn, _result("**Memory**\n1. **vast 8x-RTX_3090**: 8×", calls)) == []
    assert missing_kinds(turn, _result("2. **vast 8x-RTX_3090**", calls)) == ["ranking"]
    empty = [calls[0], _call("rank_instances", {}, {"ranked": []})]
    assert missing_kinds(turn, _result("**Nothing fits**\nNone of the 3", empty)) == []
    assert missing_kinds(turn, _result("1. **vast 8x-RTX_3090**", calls[1:])) == ["ranking"]


def test_fit_checks_the_hardware_named() -> None:
    calls = [_call("check_fit", {"gpu_memory_gib": 24.0, "num_gpus": 2})]
    answer = "**Yes, it fits.** needs 20 GiB"
    assert missing_kinds({"expect": ["fit"]}, _result(answer, calls)) == []
    assert missing_kinds({"expect": ["fit"], "hardware": {"gpus": 2, "gib": [24]}},
                         _result(answer, calls)) == []  # fmt: skip
    assert missing_kinds({"expect": ["fit"], "hardware": {"gpus": 1, "gib": [24]}},
                         _result(answer, calls)) == ["fit"]  # fmt: skip
    assert missing_kinds({"expect": ["fit"]}, _result("Yes.", calls)) == ["fit"]


def test_compare_needs_one_table_row_per_gpu_in_order() -> None:
    calls = [
        _call("rank_instances", {"gpus": ["A100"]}),
        _call("rank_instances", {"gpus": ["H100"]}),
    ]
    table = "Best:\n\n| GPU | fits |\n|---|---|\n| A100 | yes |\n| H100 | yes |"
    assert (
        missing_kinds({"expect": ["compare"], "gpus": ["A100", "H100"]}, _result(table, calls))
        == []
    )
    assert missing_kinds({"expect": ["compare"], "gpus": ["H100", "A100"]},
                         _result(table, calls)) == ["compare"]  # fmt: skip
    assert missing_kinds({"expect": ["compare"]}, _result("A100 vs H100", calls)) == ["compare"]


def test_why_not_changes_first_choice_citation_scope_hello_question() -> None:
    two = [_call("rank_instances", {}, _RANKED), _call("rank_instances", {"gpus": ["H100"]})]
    assert missing_kinds({"expect": ["why_not"], "target": "H100"},
                         _result("H100 is option 6.", two)) == []  # fmt: skip
    assert missing_kinds({"expect": ["why_not"], "target": "H100"},
                         _result("A100 is option 6.", two)) == ["why_not"]  # fmt: skip
    assert missing_kinds({"expect": ["changes"]}, _result("**Changed:** method a → b.", [])) == []
    first = "With the first choice, **vast 8x-RTX_3090** (8×), 2 hr.\n\n**Memory**"
    assert missing_kinds({"expect": ["first_choice"]}, _result(first, two[:1])) == []
    late = _result("**Memory**\n\n" + first, two[:1])
    assert missing_kinds({"expect": ["first_choice"]}, late) == ["first_choice"]
    search = [_call("search_knowledge", {})]
    cited = "**Spot**\n\ntext\n\n**Sources**\n- Spot (English)"
    assert missing_kinds({"expect": ["citation"]}, _result(cited, search, citations=1)) == []
    assert missing_kinds({"expect": ["citation"]}, _result(cited, search)) == ["citation"]
    scope, hello = message("en", "scope.covers"), message("en", "hello.intro")
    assert missing_kinds({"expect": ["scope"]}, _result(f"x\n\n{scope}", [])) == []
    assert missing_kinds({"expect": ["scope"]}, _result(hello, [])) == ["scope"]
    assert missing_kinds({"expect": ["hello"]}, _result(hello, [])) == []
    assert missing_kinds({"expect": ["question"]}, _result("Which model?", [])) == []
    assert missing_kinds({"expect": ["question"]}, _result("Which?\n\nmore", [])) == ["question"]
