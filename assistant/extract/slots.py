"""extract_slots: every field of the job (`tools.job.JobSpec`) one message sets.

Readers run in a fixed order over the folded text; each masks what it read, so a number is
used once: model and GPU names first (so "8x7B" stays Mixtral's and "A100 80GB" a GPU), then
money ("$3/h" is no deadline), context lengths, data sizes, bare model sizes, GPU counts, VRAM,
batch and rank, deadlines, and finally the word slots (method, spot, objective, ...). When a
message sets a slot twice, the last mention wins ("not 8B but 70B"). A price or a GPU that a
sentence only talks about ("an H100 costs $0.01/h") is read and masked but sets no slot
(`assistant.extract.cues`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple, cast

from pydantic import ValidationError

from assistant.extract.cues import gpu_is_wanted, money_is_limit
from assistant.extract.names import Found, find_gpus, find_models
from assistant.extract.numbers import parse_number, read_odd_number
from assistant.extract.patterns import Patterns, number_word_value, patterns
from assistant.extract.regions import find_region, read_providers
from assistant.extract.text import MASK, fold
from assistant.extract.vision_slots import is_diffusion, read_bare_side, read_vision
from tools.architectures.param_guess import MAX_PARAMS, MIN_PARAMS
from tools.gpus import lookup_gpu
from tools.job import FieldName, JobUpdate
from tools.job.limits import MAX_BATCH, MAX_SEQ_LEN

MAX_CHARS = 20_000  # longer messages are read up to here (the assistant refuses > 4000 anyway)
_MAX_VRAM_GIB = 1024  # more per GPU than any GPU has: not a VRAM figure
_MAX_COUNT = MAX_BATCH  # GPUs, batch, rank: the job's own upper limits


class Doc:
    """The folded message; spans read are masked so later readers skip them. `written` keeps,
    per slot, the words that set it (as folded), for a value the job cannot take; `image_job`:
    the conversation's job is a diffusion model's (a bare "at 1024" is then its resolution)."""

    def __init__(self, text: str, image_job: bool = False) -> None:
        self.text = fold(text[:MAX_CHARS])
        self.written: dict[str, str] = {}
        self.image_job = image_job

    def mask(self, start: int, end: int) -> None:
        self.text = self.text[:start] + MASK * (end - start) + self.text[end:]

    def note(self, slot: str, match: re.Match[str]) -> None:
        self.written[slot] = match.group().strip()


Slots = dict[str, Any]
Reader = Callable[[Doc, Patterns, Slots], None]


class RejectedSlot(NamedTuple):
    """A value the message states outright that the job cannot take ("-100M tokens", "batch
    0", "1e20 samples"): the field, the words as written (folded) and what is valid."""

    field: FieldName
    written: str
    reason: str


class SlotReading(NamedTuple):
    update: JobUpdate
    rejected: tuple[RejectedSlot, ...]


def extract_slots(text: str, lang: str, image_job: bool = False) -> JobUpdate:
    """The job fields `text` (in `lang`: en, nl, fr, tr, de or es; others read as en) sets;
    `image_job`: the conversation is about a diffusion model."""
    return read_slots(text, lang, image_job).update


def read_slots(text: str, lang: str, image_job: bool = False) -> SlotReading:
    """`extract_slots`, with the values read that the job model (`tools.job.JobUpdate`) refuses:
    each slot is checked alone against it, so one bad value never loses the others."""
    doc = Doc(text, image_job)
    p = patterns(lang)
    slots: Slots = {}
    for reader in _READERS:
        reader(doc, p, slots)
    kept: Slots = {}
    rejected: list[RejectedSlot] = []
    for name, value in slots.items():
        try:
            JobUpdate.model_validate({name: value})
        except ValidationError as exc:
            reason = "; ".join(str(e["msg"]) for e in exc.errors())
            written = doc.written.get(name, str(value))
            rejected.append(RejectedSlot(cast(FieldName, name), written, reason))
            continue
        kept[name] = value
    return SlotReading(JobUpdate(**kept), tuple(rejected))


def _read_models(doc: Doc, p: Patterns, slots: Slots) -> None:
    for found in find_models(doc.text):
        slots["model"] = found.value
        doc.mask(found.start, found.end)


def _read_gpus(doc: Doc, p: Patterns, slots: Slots) -> None:
    """GPUs the message asks for (see `assistant.extract.cues`); every GPU name is masked."""
    named = [_gpu_mention(doc, p, found, glued) for found, glued in find_gpus(doc.text)]
    for mention in named:  # first, so "H100 or A100" reads as a list of GPUs alone
        doc.mask(mention.start, mention.end)
    wanted = [m.count is not None or gpu_is_wanted(p, doc.text, m.start, m.end) for m in named]
    # "on H200s or B200s", "A100 or H100 only": a GPU joined to a wanted one is wanted too.
    links = [i for i in range(1, len(named))
             if p.conjunction.fullmatch(doc.text, named[i - 1].end, named[i].start)]  # fmt: skip
    for i in [*links, *reversed(links)]:
        wanted[i - 1] = wanted[i] = wanted[i - 1] or wanted[i]
    chosen: list[str] = []
    for mention, want in zip(named, wanted, strict=True):
        if want and mention.count is not None and 1 <= mention.count <= _MAX_COUNT:
            slots["num_gpus"] = mention.count
        if want:
            chosen += [gid for gid in mention.ids if gid not in chosen]
    if chosen:
        slots["gpus"] = chosen


@dataclass(frozen=True)
class _GpuMention:
    ids: list[str]
    start: int  # with the count before the name, if any
    end: int  # with the memory written next to it, if any
    count: int | None


def _gpu_mention(doc: Doc, p: Patterns, found: Found, glued_count: int | None) -> _GpuMention:
    """A GPU name with the count before it ("8x", "two", "a single") and its memory."""
    start, count = found.start, glued_count
    before = p.count_before_gpu.search(doc.text, max(0, start - 24), start)
    if before is not None and count is None:
        count = _count(p, before)
        if count is not None:
            start = before.start()
    ids, start, end = _memory_variant(doc, p, found.value.split(","), start, found.end)
    return _GpuMention(ids, start, end, count)


def _memory_variant(
    doc: Doc, p: Patterns, ids: list[str], start: int, end: int
) -> tuple[list[str], int, int]:
    """The variants with the memory written next to the name ("80GB A100", "A100 with 80 GB"),
    and the span including it; the ids and span unchanged when there is none or none match."""
    after = p.vram_after_gpu.match(doc.text, end)
    before = p.vram_before_gpu.search(doc.text, max(0, start - 12), start)
    for near in (after, before):
        if near is None:
            continue
        gib = parse_number(near["n"])
        variants = [gid for gid in ids if lookup_gpu(gid).vram_gib == gib]
        if variants:
            return variants, min(start, near.start()), max(end, near.end())
    return ids, start, end


def _count(p: Patterns, match: re.Match[str]) -> int | None:
    """A GPU count before a name: digits, a number word of two or more, or "single"."""
    groups = match.groupdict()
    if groups.get("one"):
        return 1
    if not (groups.get("n") or groups.get("w")):
        return None
    value = number_word_value(p, match)
    if groups.get("w") and value < 2:  # "a H100", "een A100": the GPU, not a count
        return None
    return int(value) if value == int(value) else None


def _read_money(doc: Doc, p: Patterns, slots: Slots) -> None:
    """Caps and budgets: amounts with a limiting cue or standing alone (see
    `assistant.extract.cues`); every amount is masked, wanted or not."""
    amounts = [a for a in (_amount(doc, p, m) for m in p.money.finditer(doc.text)) if a]
    opened: int | None = None  # where a range the next amount closes begins
    for i, amount in enumerate(amounts):
        # "between $1 and $3 per hour": a range ending in a rate is a rate; its top is the cap.
        following = amounts[i + 1] if i + 1 < len(amounts) else None
        if (
            following
            and following.hourly
            and p.range_link.fullmatch(doc.text, amount.end, following.start)
        ):
            opened = amount.begin if opened is None else opened
            continue
        begin = amount.begin if opened is None else opened
        opened = None
        if money_is_limit(p, doc.text, begin, amount.end):
            slot = "max_price_per_hour" if amount.hourly else "budget"
            slots[slot] = amount.money
            doc.written[slot] = doc.text[amount.begin : amount.end].strip()
    for amount in amounts:
        doc.mask(amount.start, amount.end)


class _Amount(NamedTuple):
    money: dict[str, Any]  # a Money's fields: the job model checks them (bounds included)
    start: int  # with rate words before the amount ("saatte 50 TL", "hourly ... $3")
    end: int  # with rate words after it ("$3/h", "2 € de l'heure")
    hourly: bool
    begin: int  # where the amount itself begins


def _amount(doc: Doc, p: Patterns, match: re.Match[str]) -> _Amount | None:
    """The money a match spells, its span (with any rate words), and whether it is per hour."""
    amount = parse_number(match["n"] or match["n2"]) * _magnitude(p, match["mag"] or match["mag2"])
    currency = next((code for code, _ in p.currency.finditer(match.group())), None)
    if currency is None or amount <= 0:
        return None
    start, end = match.span()
    after = p.rate_after.match(doc.text, end)
    before = p.rate_before.search(doc.text, max(0, start - 40), start)
    return _Amount(
        {"amount": amount, "currency": currency},
        before.start() if before else start,
        after.end() if after else end,
        bool(after or before),
        start,
    )


def _magnitude(p: Patterns, word: str | None) -> float:
    return p.magnitudes[word.rstrip(".")] if word else 1.0


def _read_seq_len(doc: Doc, p: Patterns, slots: Slots) -> None:
    for regex in p.seq_len:
        for match in list(regex.finditer(doc.text)):
            value = parse_number(match["n"]) * (1024 if match["k"] else 1)
            if 1 <= value <= MAX_SEQ_LEN and value == int(value):
                slots["seq_len"] = int(value)
                doc.mask(*match.span())


def _read_odd_data(doc: Doc, p: Patterns, slots: Slots) -> None:
    """Data amounts no plain number spells: a power of ten ("10^12 tokens") is its value; NaN,
    infinity and powers past float range are kept as such for the job model to refuse by name
    ("1e309 tokens" was dropped without a word, "10^400 tokens" read as 400-token sequences)."""
    for field, regex in p.data_odd:
        for match in list(regex.finditer(doc.text)):
            slots[field] = read_odd_number(match["n"]) * _magnitude(p, match["mag"])
            doc.note(field, match)
            slots.pop("samples" if field == "tokens" else "tokens", None)
            doc.mask(*match.span())


def _read_data(doc: Doc, p: Patterns, slots: Slots) -> None:
    for match in list(p.tokens.finditer(doc.text)):
        value = parse_number(match["n"]) * _magnitude(p, match["mag"])
        if not match["mag"] and 1 <= value < 100_000 and "seq_len" not in slots:
            if value == int(value):
                slots["seq_len"] = int(value)  # "2048 tokens": a sequence, not a dataset
        else:  # "-100M tokens", "0 tokens" too: stated, so refused by the job model, not lost
            slots["tokens"] = value
            doc.note("tokens", match)
            slots.pop("samples", None)
        doc.mask(*match.span())
    for match in list(p.samples.finditer(doc.text)):
        value = parse_number(match["n"]) * _magnitude(p, match["mag"])
        slots["samples"] = round(value) if value == int(value) else value
        doc.note("samples", match)
        slots.pop("tokens", None)
        doc.mask(*match.span())
    for regex in p.epochs:
        for match in list(regex.finditer(doc.text)):
            slots["epochs"] = number_word_value(p, match)
            doc.note("epochs", match)
            doc.mask(*match.span())


def _read_model_size(doc: Doc, p: Patterns, slots: Slots) -> None:
    for match in list(p.model_size.finditer(doc.text)):
        word = match["mag"].rstrip(".")
        glued = match.group()[len(match["n"])] not in " \t"
        named = match["noun"] is not None or p.model_before.search(
            doc.text, max(0, match.start() - 30), match.start()
        )
        if not (named or (glued and word in ("b", "bn"))):
            continue
        count = parse_number(match["n"]) * p.magnitudes[word]
        if MIN_PARAMS <= count <= MAX_PARAMS:
            slots["model"] = _count_spec(count)
            doc.mask(*match.span())


def _count_spec(count: float) -> str:
    """A count as resolve_model reads it: 7e9 -> "7B", 3.5e8 -> "350M"."""
    if count >= 1e9:
        return f"{count / 1e9:g}B"
    return f"{count / 1e6:g}M"


def _read_gpu_count(doc: Doc, p: Patterns, slots: Slots) -> None:
    for regex in p.gpu_count:
        for match in list(regex.finditer(doc.text)):
            count = _count(p, match)
            if count is not None:  # "0 GPUs", "100000 GPUs": stated, refused by the job model
                slots["num_gpus"] = count
                doc.note("num_gpus", match)
                doc.mask(*match.span())


def _read_vram(doc: Doc, p: Patterns, slots: Slots) -> None:
    for match in list(p.vram.finditer(doc.text)):
        value = parse_number(match["n"])
        if 0 < value <= _MAX_VRAM_GIB:
            slots["max_vram_gib"] = value
            doc.mask(*match.span())


def _read_batch_rank(doc: Doc, p: Patterns, slots: Slots) -> None:
    for slot, regexes in (("micro_batch_size", (p.batch,)), ("lora_rank", p.rank)):
        for regex in regexes:
            for match in list(regex.finditer(doc.text)):
                value = parse_number(match["n"])
                slots[slot] = int(value) if value == int(value) else value
                doc.note(slot, match)
                doc.mask(*match.span())


def _read_deadline(doc: Doc, p: Patterns, slots: Slots) -> None:
    for match in list(p.deadline.finditer(doc.text)):
        value = number_word_value(p, match)
        hours = value * (1 if match["hour"] else 24 if match["day"] else 168)
        slots["deadline_hours"] = hours
        doc.note("deadline_hours", match)
        doc.mask(*match.span())


def _read_words(doc: Doc, p: Patterns, slots: Slots) -> None:
    text = doc.text
    for slot, choice in (("spot", p.spot), ("objective", p.objective),
                         ("precision", p.precision), ("optimizer", p.optimizer)):  # fmt: skip
        for value, match in choice.finditer(text):
            if slot == "spot" and value == "allowed" and p.negation_after.match(text, match.end()):
                value = "never"  # "spot uygun değil": a negation after the approval
            slots[slot] = value
    if "spot" not in slots:
        for match in p.spot_approval.finditer(text):
            gap = match["gap"] or match["gap2"] or ""
            if not p.negation_any.search(gap) and not p.negation_after.match(text, match.end()):
                slots["spot"] = "allowed"
    methods = [(match.start(), value, match) for value, match in p.method.finditer(text)]
    methods += [(match.start(), "full", match) for match in p.full_split.finditer(text)]
    for _, value, match in sorted(methods, key=lambda item: item[0]):
        if not p.set_aside(text, match):
            slots["method"] = value
    for value, match in p.checkpointing.finditer(text):
        off = p.set_aside(text, match) or p.off_after.match(text, match.end())
        slots["gradient_checkpointing"] = "none" if off else "full" if value == "term" else value
    read_providers(p, text, slots)
    region = find_region(p, text)
    if region is not None:
        slots["regions"] = [region]


def _read_vision(doc: Doc, p: Patterns, slots: Slots) -> None:
    read_vision(doc, slots)


def _read_bare(doc: Doc, p: Patterns, slots: Slots) -> None:
    """Values written alone, once every reader with a noun or label has run: a side in pixels
    for a diffusion job ("at 1024"), a context length as a power-of-two "k" ("8k?", "32k
    olsun": no noun took it, and data amounts are not written that way)."""
    diffusion = doc.image_job or is_diffusion(slots.get("model"))
    if diffusion:
        read_bare_side(doc, slots)
    if diffusion or "seq_len" in slots:
        return
    for match in p.bare_context.finditer(doc.text):
        if not p.money_cue_before.search(doc.text, 0, match.start()):  # "budget 8k": money
            slots["seq_len"] = int(match["n"]) * 1024
            doc.mask(*match.span())


_READERS: tuple[Reader, ...] = (
    _read_vision,
    _read_models,
    _read_gpus,
    _read_money,
    _read_odd_data,
    _read_seq_len,
    _read_data,
    _read_model_size,
    _read_gpu_count,
    _read_vram,
    _read_batch_rank,
    _read_deadline,
    _read_words,
    _read_bare,
)
