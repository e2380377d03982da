"""What a message says relative to the job in the conversation.

Amounts changed relative to the job (`read_scaling`): "double the tokens", "halve the
batch size", "la moitié des tokens", "verdubbel het aantal epochs", "token sayısını iki katına
çıkar", "el doble de presupuesto".

A factor word (lexicon `scale.double`, `scale.triple`, `scale.quadruple`, `scale.half`) stands
next to a field's noun (the nouns the slot readers use: `noun.tokens`, `noun.samples`,
`noun.data`, `noun.epochs`, `label.seq_len`, `label.batch`, `label.rank`, `noun.gpu`,
`noun.budget`), before or after it, with at most three words between ("double the number of
tokens"). The new value is the job's own value times the factor, or the default's when the job
left the field open and its default is a number (`tools.job.defaults`): "double the context"
on a job at the default 2,048 tokens per sequence asks for 4,096. A value the message states
outright wins over a relative one; "half precision", "double quantization" and "double-check"
hold no factor.

A bare size that is the conversation's own model's (`names_own_model`): "is spot safe for my
70B QLoRA run?" in a conversation about Llama 3.1 70B asks about that model, not about a
generic 70-billion-parameter one.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any, Final

from pydantic import ValidationError

from assistant.extract.lexicon import lexicon
from assistant.extract.text import compile_marked, fold
from tools.architectures import ModelArch, lookup_model
from tools.architectures.param_guess import parse_param_count
from tools.errors import AdvisorError
from tools.job import JobSpec, JobUpdate, Money
from tools.job.defaults import default_for

__all__ = ["names_own_model", "read_scaling"]

# A size within this share of the conversation's model's parameter count names that model
# (registry sizes are rounded: Llama 3.1 70B has 70.55 B, Qwen2.5 7B 7.62 B).
SAME_SIZE: Final = 0.10

FACTORS: Final = {"double": 2.0, "triple": 3.0, "quadruple": 4.0, "half": 0.5}
# The fields each noun names; data words name whichever of tokens and samples the job counts.
NOUN_FIELDS: Final = {
    "noun.tokens": ("tokens",),
    "noun.samples": ("samples",),
    "noun.data": ("tokens", "samples"),
    "noun.epochs": ("epochs",),
    "label.seq_len": ("seq_len",),
    "label.batch": ("micro_batch_size",),
    "label.rank": ("lora_rank",),
    "noun.gpu": ("num_gpus",),
    "noun.budget": ("budget",),
}
_WHOLE: Final = ("samples", "micro_batch_size", "seq_len", "lora_rank", "num_gpus")
_GAP_WORDS: Final = 3
# Between a factor and its noun: up to three words of letters, within one clause (a number
# between means the message states an amount of its own; a comma starts another thought).
_GAP = re.compile(rf"[\s'-]+(?:[^\W\d]+[\s'-]+){{0,{_GAP_WORDS}}}")
# What a factor word is part of when it is no factor: "half precision", "double quant".
_NOT_A_FACTOR = re.compile(
    r"[\s-]*(?:precis|hassas|prazis|check|chec|quant|kwant|kuant)", re.UNICODE
)


@cache
def _patterns() -> tuple[re.Pattern[str], tuple[str, ...], re.Pattern[str], tuple[str, ...]]:
    lex = lexicon()
    factors = [(p, name) for name in FACTORS for p in lex.get(f"scale.{name}")]
    nouns = [(p, cat) for cat in NOUN_FIELDS for p in lex.get(cat)]
    factor_re, factor_values = compile_marked(factors)
    noun_re, noun_values = compile_marked(nouns)
    return factor_re, factor_values, noun_re, noun_values


def read_scaling(text: str, prior: JobSpec, stated: JobUpdate) -> dict[str, Any]:
    """The fields `text` scales relative to `prior`, with their new values; fields `stated`
    sets outright are left to it. Empty when the message scales nothing."""
    factor_re, factor_values, noun_re, noun_values = _patterns()
    folded = fold(text)
    nouns = [(m, noun_values[m.lastindex - 1]) for m in noun_re.finditer(folded) if m.lastindex]
    found: dict[str, Any] = {}
    for factor in factor_re.finditer(folded):
        name = factor_values[factor.lastindex - 1] if factor.lastindex else ""
        if _NOT_A_FACTOR.match(folded, factor.end()):
            continue
        category = _noun_near(folded, factor, nouns)
        if category is None:
            continue
        for field in _fields(NOUN_FIELDS[category], prior):
            if getattr(stated, field) is None and field not in found:
                value = _scaled(field, prior, FACTORS[name])
                if value is not None:
                    found[field] = value
    return found


def _noun_near(
    text: str, factor: re.Match[str], nouns: list[tuple[re.Match[str], str]]
) -> str | None:
    """The category of the noun right after the factor, else of the one right before it."""
    for noun, category in nouns:
        if noun.start() >= factor.end() and _GAP.fullmatch(text, factor.end(), noun.start()):
            return category
    for noun, category in reversed(nouns):
        if noun.end() <= factor.start() and _GAP.fullmatch(text, noun.end(), factor.start()):
            return category
    return None


def _fields(fields: tuple[str, ...], prior: JobSpec) -> tuple[str, ...]:
    """Data words scale what the job counts its data in (tokens unless it counts samples)."""
    if len(fields) == 1:
        return fields
    return ("samples",) if prior.samples is not None and prior.tokens is None else ("tokens",)


def _scaled(field: str, prior: JobSpec, factor: float) -> Any:
    """`field`'s value in `prior` (or its numeric default) times `factor`, if the job can
    take it; None otherwise."""
    base = getattr(prior, field)
    if base is None and field not in ("tokens", "samples", "budget"):
        base = default_for(field, prior.method)
    value: Any
    if isinstance(base, Money):
        value = Money(amount=base.amount * factor, currency=base.currency)
    elif isinstance(base, int | float) and not isinstance(base, bool):
        value = base * factor
        if field in _WHOLE:
            value = max(1, round(value))
    else:
        return None
    try:
        JobUpdate.model_validate({field: value})
    except ValidationError:
        return None
    return value


def names_own_model(update: JobUpdate, prior: JobSpec) -> bool:
    """Whether the model `update` names is a bare size ("70B") that the conversation's own
    model has, within `SAME_SIZE`."""
    size = parse_param_count(update.model, strict=False) if isinstance(update.model, str) else None
    if size is None or prior.model is None:
        return False
    if isinstance(prior.model, ModelArch):
        own = prior.model
    elif parse_param_count(prior.model, strict=False) is not None:
        return False  # already a bare size: the new one replaces it
    else:
        try:
            own = lookup_model(prior.model)
        except AdvisorError:
            return False
    total = own.total_params()
    return abs(size - total) <= SAME_SIZE * total
