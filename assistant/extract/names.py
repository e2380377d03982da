"""Model and GPU names found in a message by scanning word n-grams against the registries.

Models: consecutive words are joined and normalised as `tools.architectures.registry.normalize_name`
does ("Llama 3.1 70B", "llama3-8b", "meta-llama/Llama-3.1-8B-Instruct" all hit), longest
n-gram first; "<family> <size>" with no exact entry ("Llama 70B", "Qwen 14B") picks the newest
registry entry of that family and size. A misspelt family word ("lamma 3.1 8b", "mistrall 7b")
is read as the one registry family word it is clearly closest to (rapidfuzz ratio) when the
corrected words name a registry model with a size or version. GPUs: the same over `tools.gpus`
names; a bare family ("A100", "H100s") means every variant of it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from tools.architectures.multimodal import list_diffusion, list_vlms
from tools.architectures.registry import list_models, model_names, normalize_name
from tools.gpus import find_gpu, gpu_ids, list_gpus, lookup_gpu
from tools.gpus import normalize_name as gpu_key

_TOKEN = re.compile(r"[^\s,;:!?()\[\]{}\"'<>|¦]+")
_MAX_MODEL_WORDS = 5
_MAX_GPU_WORDS = 3
_SIZE = re.compile(r"^\d+(?:\.\d+)?[bm]$")
_VERSION = re.compile(r"^v?\d+(?:\.\d+)*$")
_COUNT_GLUED = re.compile(r"^(\d+)x(.+)$")
_STEM = re.compile(r"[a-z]+")
_MIN_FUZZY = 4  # letters a misspelt family word needs ("phi" is too short to guess from)
_CLOSE_STEM = 80  # rapidfuzz ratio (0-100) from which a word is read as a family word: "lamma"
_MARGIN = 5  # ... and by this much closer than to the next family word ("mistrl": mistral)
# Words that may open a multi-word GPU name ("RTX 4090", "NVIDIA A100"); any other first word
# must hold a digit ("H100 SXM"), so "a 10" is never read as the A10.
_GPU_OPENERS = frozenset({"nvidia", "rtx", "geforce", "tesla", "amd", "instinct", "quadro", "hgx",
                          "grace"})  # fmt: skip


@dataclass(frozen=True)
class Found:
    """A name found at [start, end) of the folded text."""

    start: int
    end: int
    value: str


@dataclass(frozen=True)
class _Token:
    start: int
    end: int
    text: str


def tokens(text: str) -> list[_Token]:
    """Words of `text` (split on spaces, punctuation and apostrophes: "8b'yi" -> "8b", "yi")."""
    return [_Token(m.start(), m.end(), m.group()) for m in _TOKEN.finditer(text)]


@cache
def _model_index() -> dict[str, str]:
    """Normalised registry names -> model id (the registry's own index, reused)."""
    return model_names()


@cache
def _family_sizes() -> dict[tuple[str, str], str]:
    """(family word, size word) -> newest registry id: ("llama", "70b") -> Llama 3.1 70B."""
    table: dict[tuple[str, str], str] = {}
    for arch in list_models():
        family = re.match(r"[a-z]+", normalize_name(arch.name))
        words = arch.name.lower().split()
        sizes = [w for w in words if _SIZE.match(w)]
        # "Qwen2.5 Coder 14B" is a variant: "Qwen 14B" means the plain family's model
        plain = all(_SIZE.match(w) or _VERSION.match(w) for w in words[1:])
        if family and sizes and plain:
            table[(family.group(), sizes[0])] = arch.id  # later entries are newer
    return table


@cache
def _families() -> frozenset[str]:
    return frozenset(family for family, _ in _family_sizes())


@cache
def _model_prefixes() -> frozenset[str]:
    """Every prefix of every registry key: an n-gram grows only while it is one."""
    return frozenset(key[:i] for key in _model_index() for i in range(1, len(key) + 1))


def find_models(text: str) -> list[Found]:
    """Registry models named in `text`, left to right, as registry ids."""
    toks = tokens(text)
    keys = [normalize_name(t.text) for t in toks]
    found: list[Found] = []
    i = 0
    while i < len(toks):
        hit = _exact_model(keys, i) or _family_model(keys, i) or _misspelt_model(keys, i)
        if hit is None:
            i += 1
            continue
        n, model_id = hit
        found.append(Found(toks[i].start, toks[i + n - 1].end, model_id))
        i += n
    return found


def _exact_model(keys: list[str], i: int) -> tuple[int, str] | None:
    """The longest registry name starting at word i."""
    index, prefixes = _model_index(), _model_prefixes()
    best = None
    key = ""
    for n in range(1, min(_MAX_MODEL_WORDS, len(keys) - i) + 1):
        key += keys[i + n - 1]
        if key.startswith("metallama"):
            key = key[4:]
        if key not in prefixes:
            break
        if key in index:
            best = n, index[key]
    return best if keys[i] else None


def _family_model(keys: list[str], i: int) -> tuple[int, str] | None:
    """'<family> [version] <size>' with no exact registry name."""
    family = re.match(r"[a-z]+", keys[i])
    if family is None or family.group() not in _families():
        return None
    rest = keys[i][family.end() :]
    for n in (1, 2, 3):
        if i + n > len(keys):
            break
        size = keys[i + n - 1] if n > 1 else rest
        between = keys[i + 1 : i + n - 1]
        if n > 1 and rest and not _VERSION.match(rest):
            break
        if all(_VERSION.match(b) for b in between) and _SIZE.match(size):
            model_id = _family_sizes().get((family.group(), size))
            if model_id:
                return n, model_id
    return None


@cache
def _stems() -> frozenset[str]:
    """The family words registry names open with ("llama", "qwen", "mixtral", "smollm")."""
    found = (_STEM.match(key) for key in _model_index())
    return frozenset(m.group() for m in found if m and len(m.group()) >= _MIN_FUZZY)


def _misspelt_model(keys: list[str], i: int) -> tuple[int, str] | None:
    """Word i's family word close to one registry family word only (`_CLOSE_STEM`, clearly
    closer than to any other), and the corrected words a registry name with a size or
    version in it."""
    from rapidfuzz import fuzz, process  # deferred: only for a word that names no model

    stem = _STEM.match(keys[i])
    if stem is None or len(stem.group()) < _MIN_FUZZY or stem.group() in _stems():
        return None
    best = process.extract(stem.group(), _stems(), scorer=fuzz.ratio, limit=2)
    if (
        not best
        or best[0][1] < _CLOSE_STEM
        or (len(best) > 1 and best[0][1] - best[1][1] < _MARGIN)
    ):
        return None
    fixed = [*keys[:i], best[0][0] + keys[i][stem.end() :], *keys[i + 1 :]]
    hit = _exact_model(fixed, i) or _family_model(fixed, i)
    if hit is None or not any(ch.isdigit() for ch in "".join(fixed[i : i + hit[0]])):
        return None
    return hit


@cache
def _gpu_prefixes() -> frozenset[str]:
    """Every prefix of every normalised GPU name."""
    names = [gpu_key(n) for spec in list_gpus() for n in (spec.id, spec.name, *spec.aliases)]
    return frozenset(name[:i] for name in names for i in range(1, len(name) + 1))


def find_gpus(text: str, bare: bool = False) -> list[tuple[Found, int | None]]:
    """GPUs named in `text` (each a comma-joined list of canonical ids) with a count glued to
    the name ("8xH100" -> 8), left to right. With `bare`, a bare model number ("4090") counts
    as a GPU anywhere (the intent router asks which GPUs a question is about)."""
    toks = tokens(text)
    keys = [gpu_key(t.text) for t in toks]
    found: list[tuple[Found, int | None]] = []
    i = 0
    while i < len(toks):
        hit = _gpu_at(toks, keys, i, bare)
        if hit is None:
            i += 1
            continue
        n, ids, count = hit
        found.append((Found(toks[i].start, toks[i + n - 1].end, ",".join(ids)), count))
        i += n
    return found


def _gpu_at(
    toks: list[_Token], keys: list[str], i: int, bare: bool = False
) -> tuple[int, list[str], int | None] | None:
    """The longest GPU name starting at word i, with a count glued to it ("8xh100")."""
    first, count = keys[i], None
    glued = _COUNT_GLUED.match(first)
    if glued:
        count, first = int(glued.group(1)), glued.group(2)
    prefixes = _gpu_prefixes()
    opener = any(ch.isdigit() for ch in first) or first in _GPU_OPENERS
    # A bare model number ("4090") is a GPU only after a count or "single": "2x 3090",
    # "a single 4090", "twee 4090" (alone it is as likely any number).
    bare_ok = bare or glued is not None or (i > 0 and _is_count_word(keys[i - 1]))
    best = None
    key = ""
    for n in range(1, min(_MAX_GPU_WORDS, len(toks) - i) + 1):
        key += first if n == 1 else keys[i + n - 1]
        if n > 1 and not opener:
            break
        ids = _gpu_ids_for(key, bare_ok)
        if ids:
            best = n, ids, count
        if key not in prefixes:
            break
    return best


def _is_count_word(key: str) -> bool:
    return bool(re.fullmatch(r"\d+x?|x", key)) or key in _count_words()


@cache
def _count_words() -> frozenset[str]:
    """Words that may stand before a GPU's bare model number: counts, "single", "my"."""
    from assistant.extract.lexicon import lexicon

    lex = lexicon()
    words = {w for table in lex.number_words.values() for w in table}
    words |= {w for phrase in lex.get("count.one") for w in phrase.split()}
    return frozenset(
        gpu_key(w)
        for w in words
        | {"my", "our", "mijn", "mon", "ma", "mes", "benim", "mein", "meine", "mi", "mis"}
    )


def _gpu_ids_for(key: str, bare_ok: bool = False) -> list[str]:
    """Canonical ids for a normalised user key: plurals ("a100s"), families ("h100"), and a
    family with its memory ("a10080gb")."""
    if not key or (key.isdigit() and not bare_ok):
        return []
    spec = find_gpu(key) if key in _gpu_prefixes() else None
    if spec is None and key.endswith("s") and key[:-1] in _gpu_prefixes():
        key = key[:-1]
        spec = find_gpu(key)
    if spec is None:
        return []
    return _families_of().get(key) or _sized_family(key) or [spec.id]


def _sized_family(key: str) -> list[str]:
    """A family with its memory: "a10080gb" -> every 80 GB A100 (SXM and PCIe)."""
    for family, ids in _families_of().items():
        size = re.fullmatch(r"(\d+)gb", key[len(family) :]) if key.startswith(family) else None
        if size:
            return [gid for gid in ids if lookup_gpu(gid).vram_gib == int(size.group(1))]
    return []


@cache
def _families_of() -> dict[str, list[str]]:
    """Family key -> its variants, for families of two or more ("h100" -> H100-SXM, ...)."""
    table: dict[str, list[str]] = {}
    for gid in gpu_ids():
        if "-" in gid:
            table.setdefault(gpu_key(gid.split("-")[0]), []).append(gid)
    return {key: ids for key, ids in table.items() if len(ids) > 1}


@cache
def name_words() -> frozenset[str]:
    """Words of model and GPU names ("llama", "qwen", "coder", "rtx"): no language's words."""
    words: set[str] = set()
    names = [(m.name, m.id) for m in list_models()]
    names += [(m.name, m.id) for m in list_diffusion()]  # "flux schnell" is a name
    names += [(m.name, m.id) for m in list_vlms()]
    for name, model_id in names:
        words |= set(re.findall(r"[a-z]+", (name + " " + model_id).lower()))
    for spec in list_gpus():
        for name in (spec.id, spec.name, *spec.aliases):
            words |= set(re.findall(r"[a-z]+", name.lower()))
    return frozenset(w for w in words if len(w) >= 2) | _GPU_OPENERS
