"""What an answer must contain, judged by its structure and never by its exact wording.

A held-out turn lists the kinds of content its answer must hold (`expect`), and may name what
they are about: the GPUs compared (`gpus`), the GPU or provider a "why not" asks about
(`target`), the hardware a fit check runs against (`hardware`: GPU count and memory sizes).
Each kind is read from the turn's own tool calls, its citations, the markup of its answer and
the message catalog of the answer's language:

- `ranking`: the memory estimate and the ranking ran, and the answer lists the ranking's first
  choice as item 1 (or says under the catalog's "nothing fits" heading that nothing fits);
- `fit`: check_fit ran (on the hardware named) and the answer opens with a bold verdict;
- `compare`: one ranking per GPU named, and a table with one row per GPU, in that order;
- `why_not`: the GPU or provider asked about was ranked on its own and the answer names it;
- `changes`: the answer opens with the catalog's "Changed:" line;
- `first_choice`: the answer opens with the first choice of the ranking, in bold;
- `citation`: knowledge search ran, the answer cites passages under the sources heading;
- `scope`, `hello`: the catalog's statement of what GPU Advisor covers / its introduction, with
  no tool call;
- `question`: one paragraph ending in a question mark, no ranking or fit check.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["KINDS", "missing_kinds"]

_MARK = "\x00"


def _ok(result: Any, name: str) -> list[Any]:
    return [c for c in result.tool_calls if c.name == name and c.status == "success"]


def _msg(lang: str, key: str, **values: object) -> str:
    from assistant.answers.i18n import message

    return message(lang, key, **values)


def _prefix(lang: str, key: str, field: str) -> str:
    return _msg(lang, key, **{field: _MARK}).split(_MARK)[0]


def _blocks(answer: str) -> list[str]:
    return [b.strip() for b in answer.split("\n\n") if b.strip()]


def _bold_instance(option: Mapping[str, Any]) -> str:
    """How an answer names a ranked option: '**vast 8x-RTX_3090**' for 'vast/8x-RTX_3090'."""
    provider, instance_type = str(option["instance_id"]).split("/", 1)
    return f"**{provider} {instance_type}**"


def _main_ranking(result: Any) -> Mapping[str, Any] | None:
    """The ranking of the job itself: a turn that ranks the job ranks it first (a "why not"
    ranks the GPU or provider asked about after it)."""
    calls = _ok(result, "rank_instances")
    found: Mapping[str, Any] | None = calls[0].result if calls else None
    return found


def _ranking(result: Any, turn: Mapping[str, Any]) -> bool:
    ranking = _main_ranking(result)
    if ranking is None or not _ok(result, "estimate_memory"):
        return False
    if ranking["ranked"]:
        return f"1. {_bold_instance(ranking['ranked'][0])}" in result.answer
    return f"**{_msg(result.language, 'none.heading')}**" in result.answer


def _fit(result: Any, turn: Mapping[str, Any]) -> bool:
    checks = _ok(result, "check_fit")
    if not checks or not result.answer.startswith("**"):
        return False
    hardware = turn.get("hardware")
    if hardware is None:
        return True
    sizes = sorted(float(c.args["gpu_memory_gib"]) for c in checks)
    counts = {int(c.args.get("num_gpus", 1)) for c in checks}
    wanted = sorted(float(g) for g in hardware["gib"])
    return sizes == wanted and counts == {int(hardware.get("gpus", 1))}


def _table_labels(answer: str) -> list[str]:
    rows = [line for line in answer.splitlines() if line.startswith("|")]
    cells = [row.strip("|").split("|")[0].strip() for row in rows[2:]]  # header, rule
    return cells


def _compare(result: Any, turn: Mapping[str, Any]) -> bool:
    sides = [c for c in _ok(result, "rank_instances") if c.args.get("gpus")]
    labels = _table_labels(result.answer)
    if len(sides) < 2 or len(labels) != len(sides):
        return False
    wanted = turn.get("gpus")
    return wanted is None or [x.casefold() for x in labels] == [x.casefold() for x in wanted]


def _why_not(result: Any, turn: Mapping[str, Any]) -> bool:
    if len(_ok(result, "rank_instances")) < 2:  # the job's ranking, then the target's
        return False
    target = turn.get("target")
    return target is None or str(target).casefold() in result.answer.casefold()


def _changes(result: Any, turn: Mapping[str, Any]) -> bool:
    return result.answer.startswith(_prefix(result.language, "amend.changed", "items"))


def _first_choice(result: Any, turn: Mapping[str, Any]) -> bool:
    ranking = _main_ranking(result)
    if ranking is None or not ranking["ranked"]:
        return False
    blocks = _blocks(result.answer)
    return bool(blocks) and _bold_instance(ranking["ranked"][0]) in blocks[0]


def _citation(result: Any, turn: Mapping[str, Any]) -> bool:
    heading = f"**{_msg(result.language, 'citations.heading')}**"
    return bool(_ok(result, "search_knowledge") and result.citations) and heading in result.answer


def _scope(result: Any, turn: Mapping[str, Any]) -> bool:
    return not result.tool_calls and _msg(result.language, "scope.covers") in result.answer


def _hello(result: Any, turn: Mapping[str, Any]) -> bool:
    return not result.tool_calls and _msg(result.language, "hello.intro") in result.answer


def _question(result: Any, turn: Mapping[str, Any]) -> bool:
    blocks = _blocks(result.answer)
    busy = _ok(result, "rank_instances") or _ok(result, "check_fit")
    return len(blocks) == 1 and blocks[0].rstrip().endswith("?") and not busy


KINDS: dict[str, Callable[[Any, Mapping[str, Any]], bool]] = {
    "ranking": _ranking,
    "fit": _fit,
    "compare": _compare,
    "why_not": _why_not,
    "changes": _changes,
    "first_choice": _first_choice,
    "citation": _citation,
    "scope": _scope,
    "hello": _hello,
    "question": _question,
}


def missing_kinds(turn: Mapping[str, Any], result: Any) -> list[str]:
    """The kinds of `turn["expect"]` the turn's result does not hold (empty: the right shape)."""
    return [kind for kind in turn["expect"] if not KINDS[kind](result, turn)]
