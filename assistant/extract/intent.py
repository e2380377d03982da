"""classify_intent: a job description, a guidance question, both, or neither (the question's
kind; the intent router, `assistant.extract.routing`, weighs it with the other cues).

- guidance: a question about a concept ("are spot instances safe for training?", "NVLink neden
  önemli?"), a question about the domain ("how often should I checkpoint on spot?", "spot
  sunucularda ne sıklıkla checkpoint almalıyım?"), or a quantity with no job in it ("hoeveel
  VRAM heb ik nodig om te fine-tunen?");
- job: a job's specifics (model, data, money, deadline, GPUs, ...), a wish to train or rent, a
  request for a recommendation ("which GPU should I rent ...?"), or an amendment of the job
  already in the state ("and with full fine-tuning?", "only spot");
- mixed: a concept question about a specific job ("is spot safe for my 70B QLoRA run?"), or about
  the job in the state ("is spot safe for my run?");
- other: greetings, thanks, anything else.

A domain question is an interrogative form ("how often", "should I", "kan ik", "dois-je",
"sollte ich", "cada cuánto", "ne sıklıkla", "nasıl"; `intent.question`) or a modal form in a
sentence with a question mark ("¿debo ...?", "almalıyım?", "ich muss ...?"; `intent.modal` and
Turkish -mAlI endings), or a Turkish question particle closing a clause ("güvenli mi?",
"kullanabilir miyim?"), together with a word of the domain (spot, checkpoint, VRAM, LoRA, GPU,
training, cost, ...; `intent.domain`) or a slot the message sets.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Literal

from assistant.extract.lexicon import lexicon
from assistant.extract.slots import extract_slots
from assistant.extract.text import alternation, compile_phrases, fold
from tools.job import JobSpec, JobUpdate

QuestionKind = Literal["job", "guidance", "mixed", "other"]

# Slots that make a message about one specific job (a method or a GPU name alone is as likely
# the topic of a general question: "what is QLoRA?", "is the H100 worth it?").
_SPECIFIC = ("model", "tokens", "samples", "max_price_per_hour", "budget", "deadline_hours",
             "num_gpus", "max_vram_gib")  # fmt: skip


# Fields a general question names as its topic rather than setting them: "what does QLoRA
# save?", "does gradient checkpointing slow training down?", "is 8-bit Adam worth it?".
TOPIC_FIELDS = (
    "method", "precision", "optimizer", "gradient_checkpointing", "spot", "zero_stage",
    "sharding", "offload_optimizer", "attention", "engine", "qlora_double_quant",
    # image-model techniques: "does EMA add much memory?", "do I need prior preservation?"
    "ema", "prior_preservation", "dreambooth", "train_text_encoder", "train_vision_tower",
    "cache_latents",
)  # fmt: skip


def names_only_topics(update: JobUpdate) -> bool:
    """Whether the message sets something and all of it could be a question's topic."""
    given = update.given()
    return bool(given) and not update.clear and set(given) <= set(TOPIC_FIELDS)


@dataclass(frozen=True)
class _Cues:
    concept: re.Pattern[str]
    quantity: re.Pattern[str]
    job: re.Pattern[str]
    own_job: re.Pattern[str]
    amend: re.Pattern[str]
    recommend: re.Pattern[str]
    question: re.Pattern[str]
    modal: re.Pattern[str]
    domain: re.Pattern[str]
    particle: re.Pattern[str]
    hypothetical: re.Pattern[str]
    verb_first: re.Pattern[str]

    def asks(self, folded: str) -> bool:
        """Whether the text asks something: an interrogative, a clause-final question
        particle, a clause opening with its verb (Dutch and German yes/no questions: "en heb
        ik dan nvlink nodig"), or a modal form in a sentence with a question mark."""
        if self.question.search(folded) or self.particle.search(folded):
            return True
        if self.verb_first.search(folded):
            return True
        return "?" in folded and bool(self.modal.search(folded))


_CATEGORIES = ("concept", "quantity", "job", "own_job", "amend", "recommend", "question")


@cache
def _cues() -> _Cues:
    lex = lexicon()
    compile_ = lambda cat: compile_phrases(lex.get(f"intent.{cat}"))  # noqa: E731
    # Turkish suffixes: "-malıyım" glued to a verb stem of two or more letters (not "temeli",
    # "its base"); the particle "mi"/"mı"/"mu"/"mü" with its endings closing a clause.
    suffixes = "|".join(sorted(map(re.escape, lex.get("intent.question_suffix")), key=len)[::-1])
    particles = alternation(lex.get("intent.question_particle"))
    modal = alternation(lex.get("intent.modal"))
    concept, quantity, job, own_job, amend, recommend, question = map(compile_, _CATEGORIES)
    return _Cues(
        concept=concept,
        quantity=quantity,
        job=job,
        own_job=own_job,
        amend=amend,
        recommend=recommend,
        question=question,
        modal=re.compile(f"{modal}|(?<!\\w)(?!teme)\\w{{2,}}?(?:{suffixes or '(?!)'})(?!\\w)"),
        domain=compile_("domain"),
        particle=re.compile(f"{particles}(?=\\s*(?:[?.!,;]|$))"),
        hypothetical=compile_("hypothetical"),
        verb_first=re.compile(
            f"(?:^|[.,;:!?])\\s*(?:{alternation(lex.get('intent.clause_opener'))}\\s+)?"
            f"{alternation(lex.get('intent.verb_first'))}"
        ),
    )


def classify_intent(
    text: str, lang: str, state: JobSpec, update: JobUpdate | None = None
) -> QuestionKind:
    """What the message asks for, given the job known so far. `update` is the message's
    `extract_slots` result when the caller already has it."""
    update = update if update is not None else extract_slots(text, lang)
    folded = fold(text)
    cues = _cues()
    specific = any(getattr(update, slot) is not None for slot in _SPECIFIC)
    has_job = state.model is not None
    # A question that only names techniques ("how much VRAM does QLoRA save?") asks about them;
    # it changes the job only when it says so ("and with QLoRA?", "my run").
    topic_question = (cues.asks(folded) or bool(cues.quantity.search(folded))) and not (
        cues.hypothetical.search(folded)
    )
    sets = not update.is_empty() and not (names_only_topics(update) and topic_question)
    about_state = has_job and bool(cues.own_job.search(folded) or cues.amend.search(folded) or sets)
    # "Which GPU should I rent ...?" asks for a recommendation: a job, whatever else it says.
    recommend = bool(cues.recommend.search(folded))
    if cues.concept.search(folded) and not recommend:
        return _question_intent(cues, folded, update, specific, has_job)
    if cues.quantity.search(folded) and not specific:
        return "job" if about_state or (has_job and cues.job.search(folded)) else "guidance"
    domain = bool(cues.domain.search(folded)) or not update.is_empty()
    if domain and not recommend and cues.asks(folded):
        return _question_intent(cues, folded, update, specific, has_job)
    if not update.is_empty() or cues.job.search(folded) or about_state:
        return "job"
    return "other"


def _question_intent(
    cues: _Cues, folded: str, update: JobUpdate, specific: bool, has_job: bool
) -> QuestionKind:
    """A question: about a specific job (mixed), amending the job (job), or general."""
    if specific or (has_job and cues.own_job.search(folded)):
        return "mixed"
    if has_job and cues.amend.search(folded) and not update.is_empty():
        return "job"
    return "guidance"
