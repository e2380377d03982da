"""Which of the six languages a turn is answered in and a page is shown in: the one set of rules.

- `choose_language(message, override, previous)`: the answer language of a turn: the language
  asked for; else the message's own language, read from its own words: model and GPU names,
  numbers and the jargon every language shares ("LoRA", "tokens", "spot") are set aside, words
  only one language's lexicon has ("Stunden", "uur", "saatte") vote, and the detector must be
  sure of the rest; a short or ambiguous message keeps the conversation's language, and so does
  a message using the conversation's own words that the detector is not sure is another; a
  very short first message the detector is not sure of is read by its everyday words
  (greetings, thanks, function words: `everyday` in the lexicon files); else English.
- `writer_language(message, before)`: the language the person writes in, even one the project
  does not answer in, which `choose_language` takes as `writes`.
- `language_from_header(accept_language)`: the page's language from the browser's
  Accept-Language header.
- `resolve_lang(code)`: 'de', 'DE', 'de-DE' or 'de_DE' -> 'de'; anything else names what is valid.

The languages themselves are defined once in `tools.languages`.
"""

from __future__ import annotations

import re
from functools import cache

from knowledge.langid import detect_language
from tools.errors import InvalidInputError
from tools.languages import DEFAULT_LANGUAGE, LANGUAGES, Language

__all__ = ["choose_language", "language_from_header", "resolve_lang", "writer_language"]

# A message switches the conversation's language only with enough words and a sure detection.
MIN_WORDS_TO_SWITCH = 3
MIN_SCORE_TO_SWITCH = 0.5
JARGON_LANGUAGE = "en"
VOTES_TO_SWITCH = 2  # own words of another language that switch a conversation's language
# A detection at least this sure outvotes the lexicon's words.
SURE_DETECTION = 0.9
# A first message of at most this many own words, which the detector is not sure of, is read by
# its everyday words ("hallo daar!", "merhaba", "bonjour !"): on one or two words the detector
# guesses ("moin" reads French, "salut" Italian, "hallo" English).
SHORT_TEXT_WORDS = 5


def resolve_lang(lang: str) -> Language:
    """'de', 'DE', 'de-DE' or 'de_DE' -> 'de'; anything else is an InvalidInputError."""
    code = re.split(r"[-_]", lang.strip().lower(), maxsplit=1)[0]
    for known in LANGUAGES:
        if code == known:
            return known
    raise InvalidInputError("lang", lang, "one of " + ", ".join(LANGUAGES))


def choose_language(
    message: str, override: str | None, previous: str | None, writes: str | None = None
) -> Language:
    """The answer language: the override; else the language of the message's own words when
    they say it clearly (see the module docstring); else the previous language; else English.
    A conversation's language yields only to two of another language's own words, or to a sure
    detection of three words or more. `writes` is the language the person has been writing in
    (`writer_language`): one the project does not answer in (Italian, Portuguese) is answered
    in the conversation's language until a detection is sure of another ("e la A100 invece?"
    reads Spanish to the detector)."""
    if override:
        return resolve_lang(override)
    fallback = resolve_lang(previous) if previous else DEFAULT_LANGUAGE
    words = _own_words(message)
    if not words:
        return fallback
    voted, hits = _vote(words)
    if voted == JARGON_LANGUAGE and previous and previous != JARGON_LANGUAGE:
        voted = None  # "seq len", "ctx", "bs": English words are every language's jargon
    found = detect_language(" ".join(words))
    unanswered = writes is not None and writes not in LANGUAGES
    if unanswered and found.score < SURE_DETECTION and not (voted and hits >= VOTES_TO_SWITCH):
        return fallback
    detected = found.code if found.supported and found.code in LANGUAGES else None
    outvoted = voted is not None and detected != voted and found.score < SURE_DETECTION
    if (
        voted is not None
        and (previous is None or hits >= VOTES_TO_SWITCH)
        and (outvoted or detected == voted)
    ):
        return voted
    if voted is not None and voted == previous and found.score < SURE_DETECTION:
        return fallback  # the conversation's own words, and a detector not sure of another
    sure = len(words) >= MIN_WORDS_TO_SWITCH and found.score >= MIN_SCORE_TO_SWITCH
    if previous is None and not sure and len(words) <= SHORT_TEXT_WORDS:
        everyday = _everyday_language(message, detected)
        if everyday is not None:
            return everyday
    if detected is None:
        return fallback
    return resolve_lang(detected) if sure or (previous is None and voted == detected) else fallback


def writer_language(message: str, before: str | None) -> str | None:
    """The language the person writes in after `message`, supported or not ("it", "pt"): the
    message's, when the detector reads three own words or more and is sure of it (or, with
    nothing known `before`, fairly sure); else what was known before."""
    words = _own_words(message)
    if len(words) < MIN_WORDS_TO_SWITCH:
        return before
    found = detect_language(" ".join(words))
    needed = SURE_DETECTION if before is not None else MIN_SCORE_TO_SWITCH
    return found.code if found.score >= needed else before


def _own_words(message: str) -> list[str]:
    """The message's words without names, numbers and shared jargon."""
    from assistant.extract.lexicon import language_words
    from assistant.extract.text import fold

    _, shared = language_words()
    tokens = re.findall(r"[^\s,;:!?()\[\]{}\"<>/]+", message)
    words = []
    for token in tokens:
        bare = token.strip(".'’¿¡-")
        if not bare or any(ch.isdigit() for ch in bare) or not re.search(r"[^\W\d_]", bare):
            continue
        if fold(bare) in shared or _is_name(fold(bare)):
            continue
        words.append(bare)
    return words


def _is_name(word: str) -> bool:
    from assistant.extract.names import name_words

    return word in name_words()


def _vote(words: list[str]) -> tuple[Language | None, int]:
    """The one language whose own lexicon words the message uses most, and how many (None: none
    or a tie; a tie of English with one other language goes to the other: English words are
    every language's jargon)."""
    from assistant.extract.lexicon import language_words
    from assistant.extract.text import fold

    own, _ = language_words()
    hits = {lang: sum(fold(w) in own[lang] for w in words) for lang in LANGUAGES}
    best = max(hits.values())
    winners = [lang for lang, n in hits.items() if n == best]
    if len(winners) == 2 and JARGON_LANGUAGE in winners:  # "ctx" and "saatlik": Turkish
        winners.remove(JARGON_LANGUAGE)
    return (winners[0], best) if best > 0 and len(winners) == 1 else (None, 0)


@cache
def _everyday_patterns() -> dict[Language, re.Pattern[str]]:
    from assistant.extract.lexicon import everyday_words
    from assistant.extract.text import compile_phrases

    return {lang: compile_phrases(words) for lang, words in everyday_words().items()}


def _everyday_language(message: str, detected: str | None) -> Language | None:
    """The language whose everyday words (greetings, thanks, function words) the message uses
    most; a tie goes to the detector's language when it is one of the tied, else to the first
    of them in LANGUAGES order ("hallo" is Dutch and German). None when it uses none."""
    from assistant.extract.text import fold

    folded = fold(message)
    hits = {lang: len(p.findall(folded)) for lang, p in _everyday_patterns().items()}
    best = max(hits.values())
    if best == 0:
        return None
    tied = [lang for lang in LANGUAGES if hits[lang] == best]
    return next((lang for lang in tied if lang == detected), tied[0])


def language_from_header(accept_language: str | None) -> Language:
    """The most wanted of our languages in an HTTP Accept-Language header, by q weight then
    order ('tr-TR,tr;q=0.9,en;q=0.8' -> 'tr'); English when it names none of them."""
    weighted: list[tuple[float, int, Language]] = []
    for position, part in enumerate((accept_language or "").split(",")):
        tag, _, params = part.strip().partition(";")
        code = tag.strip().lower().split("-")[0]
        weight = _q_weight(params)
        if code in LANGUAGES and weight > 0:
            weighted.append((-weight, position, resolve_lang(code)))
    return min(weighted)[2] if weighted else DEFAULT_LANGUAGE


def _q_weight(params: str) -> float:
    text = params.strip().replace(" ", "")
    if not text.startswith("q="):
        return 1.0
    try:
        return float(text[2:])
    except ValueError:
        return 0.0
