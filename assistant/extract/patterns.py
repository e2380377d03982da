"""The regular expressions extraction uses, built from the lexicon once per language.

`patterns(lang)` compiles on first use and caches; every pattern runs on folded text
(`assistant.extract.text.fold`). Groups: `n` a number, `mag` its magnitude word, `k` a "k"
suffix meaning 1024 (context lengths), `w` a number word.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache

from assistant.extract.lexicon import lexicon
from assistant.extract.numbers import ODD_NUMBER, number_source
from assistant.extract.text import alternation, compile_marked
from tools.languages import LANGUAGES

_FLAGS = re.UNICODE
PREFER_SPAN = 60  # characters before a value in which "rather ... than" sets it aside
# Currencies the lexicon names (`currency.<code>`); an amount in any of them is converted to USD
# where the job is resolved.
CURRENCIES = ("USD", "EUR", "TRY", "GBP", "CHF", "JPY", "INR")


@dataclass(frozen=True)
class Choice:
    """Phrases that each name a value, in one regex (longest phrase first, one group each)."""

    regex: re.Pattern[str]
    values: tuple[str, ...]

    def finditer(self, text: str) -> Iterator[tuple[str, re.Match[str]]]:
        """(value, match) for every phrase found, left to right."""
        for match in self.regex.finditer(text):
            yield self.values[(match.lastindex or 1) - 1], match


def _choice(groups: Mapping[str, tuple[str, ...]], glue_digits: bool = False) -> Choice:
    pairs = [(phrase, value) for value, phrases in groups.items() for phrase in phrases]
    return Choice(*compile_marked(pairs, glue_digits))


@cache
def _shared_choice(prefix: str) -> Choice:
    """A word slot's choice; the same for every language (the lexicon merges them)."""
    return _choice(lexicon().by_prefix(prefix))


@dataclass(frozen=True)
class Patterns:
    """Everything extraction matches, for one language."""

    lang: str
    magnitudes: Mapping[str, float]
    number_words: Mapping[str, int]
    money: re.Pattern[str]
    currency: Choice
    rate_after: re.Pattern[str]
    rate_before: re.Pattern[str]
    range_link: re.Pattern[str]
    seq_len: tuple[re.Pattern[str], ...]
    tokens: re.Pattern[str]
    samples: re.Pattern[str]
    # A data amount written so that no usable number can be read from it ("1e309 tokens",
    # "NaN samples") or as a power of ten ("10^12 tokens"), per field: group `n` the value.
    data_odd: tuple[tuple[str, re.Pattern[str]], ...]
    epochs: tuple[re.Pattern[str], ...]
    model_size: re.Pattern[str]
    model_before: re.Pattern[str]
    gpu_count: tuple[re.Pattern[str], ...]
    count_before_gpu: re.Pattern[str]
    vram: re.Pattern[str]
    vram_after_gpu: re.Pattern[str]
    vram_before_gpu: re.Pattern[str]
    batch: re.Pattern[str]
    rank: tuple[re.Pattern[str], ...]
    deadline: re.Pattern[str]
    method: Choice
    full_split: re.Pattern[str]
    # "8k?", "32k olsun": a power-of-two "k" no noun took (read last: a context length).
    bare_context: re.Pattern[str]
    # "spot instances zijn voor ons ook prima", "le spot c'est ok", "Spot ist doch okay": spot and
    # a word of approval in one clause, either order (group `gap`: the words between).
    spot_approval: re.Pattern[str]
    negation_any: re.Pattern[str]
    spot: Choice
    objective: Choice
    precision: Choice
    optimizer: Choice
    checkpointing: Choice
    providers: Choice
    regions: Choice
    negation_before: re.Pattern[str]
    negation_after: re.Pattern[str]
    preferred_before: re.Pattern[str]
    off_after: re.Pattern[str]
    conjunction: re.Pattern[str]
    money_cue_before: re.Pattern[str]
    money_cue_after: re.Pattern[str]
    rate_word_before: re.Pattern[str]
    gpu_cue_before: re.Pattern[str]
    gpu_cue_after: re.Pattern[str]
    filler_only: re.Pattern[str]

    def set_aside(self, text: str, match: re.Match[str]) -> bool:
        """Whether `match` is set aside: "not X", "X hariç", or the second term of a preference
        ("rather Y than X", looked for within `PREFER_SPAN` characters before it)."""
        start = match.start()
        before = self.negation_before.search(text, max(0, start - 30), start)
        preferred = self.preferred_before.search(text, max(0, start - PREFER_SPAN), start)
        after = self.negation_after.match(text, match.end())
        return before is not None or preferred is not None or after is not None


def number_word_value(p: Patterns, match: re.Match[str]) -> float:
    """The number a match's `n` (digits) or `w` (word) group spells."""
    from assistant.extract.numbers import parse_number

    if match.groupdict().get("w"):
        return float(p.number_words[match["w"]])
    return parse_number(match["n"])


def _words(table: Mapping[str, object]) -> str:
    """Alternation of plain words (number words, magnitudes), longest first, glued to digits
    allowed; each may end with a dot ("Mrd.")."""
    if not table:
        return "(?!)"
    ordered = sorted(table, key=lambda w: (-len(w), w))
    return "(?:" + "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in ordered) + r")\.?(?!\w)"


@cache
def patterns(lang: str) -> Patterns:
    """The compiled patterns for `lang` (unknown languages read as English)."""
    lang = lang if lang in LANGUAGES else "en"
    lex = lexicon()
    alt = lambda cat, glue=False: alternation(lex.get(cat), glue)  # noqa: E731
    mags = lex.magnitudes_for(lang)
    words = lex.number_words.get(lang, {})
    num = f"(?P<n>{number_source(lang)})"
    num_or_word = f"(?:{num}|(?<!\\w)(?P<w>{_words(words)}))"
    mag = f"(?:\\s?(?P<mag>{_words(mags)}))"
    conn = f"(?:{alt('connector')}\\s*)?"
    label_link = (
        r"(?:'\w+)?\s*(?:[:=]|of|to|at|van|naar|op|de|du|von|auf|is|ist|est|es|olarak|a)?\s*"
    )
    per_hour = alt("rate.after", glue=True)
    cur = tuple(alt(f"currency.{code}", True) for code in CURRENCIES)
    cur_any = "(?:" + "|".join(cur) + ")"
    num2 = number_source(lang)
    c = lambda source: re.compile(source, _FLAGS)  # noqa: E731
    return Patterns(
        lang=lang,
        magnitudes=mags,
        number_words=words,
        money=c(
            f"{cur_any}\\s*(?P<n>{num2}){mag}?|(?P<n2>{num2})(?:\\s?(?P<mag2>{_words(mags)}))?"
            f"\\s*{cur_any}"
        ),
        currency=_choice(
            {code: lex.get(f"currency.{code}") for code in CURRENCIES}, glue_digits=True
        ),
        rate_after=c(f"\\s*{per_hour}"),
        rate_before=c(f"{alt('rate.before')}[^\\d¦]{{0,25}}$"),
        range_link=c(r"\s*(?:-|to|and|tot|en|a|à|et|ile|ila|bis|und|y|ve|ou|or)?\s*"),
        seq_len=(
            c(
                f"{alt('label.seq_len')}{label_link}{num}(?P<k>k)?(?!\\w)(?:\\s*{alt('noun.tokens')})?"
            ),
            # "8k context", "8k tokens of context", "8k de contexte", "8k di contesto"
            c(
                f"{num}(?P<k>k)?[\\s-]*(?:{alt('noun.tokens')}[\\s-]*)?"
                f"(?:(?:of|de|d'|van|von|an)\\s*)?{alt('label.seq_len')}"
            ),
            c(f"{num}(?P<k>k)?\\s*{alt('noun.tokens')}\\s*{alt('per_each')}"),
        ),
        tokens=c(f"{num}{mag}?\\s*{conn}{alt('noun.tokens')}"),
        data_odd=tuple(
            (field, c(f"(?<![\\w.,^*])(?P<n>{ODD_NUMBER}){mag}?\\s*{conn}{alt(noun)}"))
            for field, noun in (("tokens", "noun.tokens"), ("samples", "noun.samples"))
        ),
        # "85k samples", and with one word before the noun: "85k chat samples", "20k training
        # examples" (letters only: "8 GPUs 500 samples" keeps its own number).
        samples=c(f"{num}{mag}?\\s*{conn}(?:[^\\W\\d_]+\\s+)?{alt('noun.samples')}"),
        epochs=(
            c(f"{num_or_word}\\s*-?\\s*{alt('noun.epochs')}"),
            c(f"{alt('noun.epochs')}\\s*[:=]\\s*{num}"),
        ),
        model_size=c(
            f"{num}{mag}(?P<noun>[\\s-]*{conn}(?:{alt('noun.params')}|{alt('noun.model')}))?"
        ),
        model_before=c(f"{alt('noun.model')}\\s+{conn}$"),
        gpu_count=(
            c(f"{num_or_word}\\s*(?:x\\s*)?(?:{alt('counter')}\\s+)?{alt('noun.gpu')}"),
            c(f"(?P<one>{alt('count.one')})\\s+{alt('noun.gpu')}"),
        ),
        # "8x", "two", "a single", "4 adet", "8 GPU" ("sur 8 GPU H100") before a GPU's name.
        count_before_gpu=c(
            f"(?:{num_or_word}\\s*x?|(?P<one>{alt('count.one')}))\\s*(?:{alt('counter')}\\s*)?"
            f"(?:{alt('noun.gpu')}\\s*)?$"
        ),
        vram=c(
            f"{num}\\s*{alt('unit.vram', glue=True)}(?!\\s*(?:vram\\s+)?{conn}"
            f"(?:{alt('noun.data')}|{alt('noun.host_memory')}))"
        ),
        vram_after_gpu=c(f"\\s*(?:{alt('connector')}\\s+)?{num}\\s*{alt('unit.vram', glue=True)}"),
        vram_before_gpu=c(f"{num}\\s*{alt('unit.vram', glue=True)}\\s*$"),
        batch=c(f"{alt('label.batch')}{label_link}{num}(?!\\w)"),
        rank=(c(f"{alt('label.rank')}{label_link}{num}(?!\\w)"), c(f"(?<!\\w)r\\s*=\\s*{num}")),
        deadline=c(
            f"{num_or_word}\\s*(?:(?P<hour>{alt('unit.hour', True)})|"
            f"(?P<day>{alt('unit.day', True)})|(?P<week>{alt('unit.week', True)}))"
        ),
        method=_shared_choice("method."),
        # A word of completeness and a training word a few words apart, in either order: the
        # split verbs of Dutch and German ("helemaal op finetunen", "ein komplettes Training"),
        # "train it completely", "entrenar el modelo completo".
        full_split=c(
            f"{alt('whole')}(?:\\s+[^\\s]+){{0,4}}?\\s+{alt('train.word')}"
            f"|{alt('train.word')}(?:\\s+[^\\s]+){{0,3}}?\\s+{alt('whole')}"
        ),
        bare_context=c(r"(?<![\w.,$€£¦])(?P<n>1|2|4|8|16|32|64|128)k(?![\w.,]?\d)(?!\w)"),
        spot_approval=c(
            f"\\bspot(?:'\\w+)?\\b(?P<gap>(?:[\\s-]+[^\\s¦,.;!?]+){{0,5}}?)[\\s-]+"
            f"{alt('approve')}(?![\\w-])"
            f"|{alt('approve')}(?P<gap2>(?:\\s+[^\\s¦,.;!?]+){{0,3}}?)\\s+spot\\b"
        ),
        negation_any=c(alt("negation")),
        spot=_shared_choice("spot."),
        objective=_shared_choice("objective."),
        precision=_shared_choice("precision."),
        optimizer=_shared_choice("optimizer."),
        checkpointing=_shared_choice("checkpointing."),
        providers=_shared_choice("provider."),
        regions=_shared_choice("region."),
        negation_before=c(f"{alt('negation')}\\s+(?:\\w+\\s+)?$"),
        negation_after=c(f"\\s*(?:'\\w+\\s*)?{alt('negation.after')}"),
        # "rather X than <here>", "plutôt du X que du", "lieber X als", "liever X dan", "mejor X
        # que": what follows the comparison word (and an article) is the value set aside.
        preferred_before=c(
            f"{alt('prefer')}(?:\\s+[^\\s¦]+){{0,3}}\\s+{alt('prefer.than')}(?:\\s+[^\\s¦]+)?\\s*$"
        ),
        off_after=c(f"\\s*{alt('off.after')}"),
        conjunction=c(
            r"\s*(?:,|/|&|\bor\b|\band\b|\bnor\b|\bof\b|\ben\b|\bou\b|\bet\b|\bni\b|"
            r"\bveya\b|\bya da\b|\bve\b|\boder\b|\bund\b|\bo\b|\by\b|\be\b)?\s*"
        ),
        # A cue, then at most three words (no digits, nothing already read) before the amount:
        # "max €2", "budget total de 1 500 €", "Budget: 800 EUR", "saatlik en fazla 80 TL".
        money_cue_before=c(f"{alt('money.cue')}\\.?(?:[\\s:=~]+[^\\W\\d]+){{0,3}}[\\s:=~]*$"),
        money_cue_after=c(f"(?:\\s*'\\w+)?\\s*{alt('money.cue_after')}"),
        rate_word_before=c(f"{alt('rate.before')}\\s*$"),
        gpu_cue_before=c(f"{alt('gpu.cue')}(?:\\s+{alt('filler')}){{0,2}}\\s*$"),
        gpu_cue_after=c(
            f"(?:\\s*'\\w+)?\\s*{alt('gpu.cue_after')}"
            f"|'(?:{'|'.join(map(re.escape, lex.get('gpu.case_suffix'))) or '(?!)'})(?!\\w)"
        ),
        filler_only=c(f"(?:[^\\w¦]|¦|{alt('filler')})*"),
    )
