"""A Llama-style architecture guessed from a bare parameter count ("7e9", "70B", "1.5 billion").

Used when the user names no known model. The dimensions follow the shape of the Llama 2 family:
head_dim 128 (64 below a hidden size of 2048), about 128 hidden units per layer, multi-head
attention, a SwiGLU MLP and an untied 32000-token vocabulary; the MLP width is then chosen so the
total lands close to the requested count: within 3% from 1e8 up, within 10% from 5e7.
"""

from __future__ import annotations

import math
import re

from tools.architectures.architecture import ModelArch
from tools.errors import InvalidInputError

# Below 50M the fixed 32000-token vocabulary alone overshoots the count; a count like "7" is more
# likely a missing "B" than a real model.
MIN_PARAMS = 5e7
MAX_PARAMS = 1e13  # ten trillion: beyond any published dense or MoE model
VALID_COUNT = "a parameter count between 5e7 and 1e13, e.g. 7e9, '70B', '1.5b', '7 billion'"

_VOCAB = 32000  # Llama 2 tokenizer
_CONTEXT = 4096  # Llama 2 context length
_HIDDEN_PER_LAYER = 128  # Llama 2 7B: 4096 / 32; 13B: 5120 / 40
_WIDTH_STEP = 256  # hidden and MLP widths are rounded to multiples of this

_SUFFIXES = {
    "": 1.0,
    "k": 1e3,
    "thousand": 1e3,
    "m": 1e6,
    "mn": 1e6,
    "million": 1e6,
    "b": 1e9,
    "bn": 1e9,
    "billion": 1e9,
    "t": 1e12,
    "trillion": 1e12,
}
_COUNT_RE = re.compile(
    r"^\s*(?P<number>\d[\d_,]*(?:\.\d*)?(?:e[+-]?\d+)?|\.\d+(?:e[+-]?\d+)?)\s*"
    r"(?P<suffix>[a-z]*)\s*(?:params|parameters)?\s*$"
)


def parse_param_count(spec: str | float, strict: bool = True) -> float | None:
    """The count that `spec` spells, e.g. "1.5b" -> 1.5e9.

    Returns None for text that is not a count when `strict` is False; raises InvalidInputError
    otherwise. Range checks are left to `model_from_param_count`.
    """
    if isinstance(spec, bool):
        raise InvalidInputError("parameter_count", spec, VALID_COUNT)
    if isinstance(spec, int | float):
        return float(spec)
    match = _COUNT_RE.match(spec.lower())
    if match is None or match["suffix"] not in _SUFFIXES:
        if strict:
            raise InvalidInputError("parameter_count", spec, VALID_COUNT)
        return None
    number = float(match["number"].replace(",", "").replace("_", ""))
    return number * _SUFFIXES[match["suffix"]]


def _blocks_params(hidden: int, layers: int, intermediate: float) -> float:
    """Llama-style decoder with multi-head attention: 4 h^2 attention, 3 h i MLP, 2 norms."""
    return layers * (4 * hidden * hidden + 3 * hidden * intermediate + 2 * hidden)


def _fixed_params(hidden: int) -> int:
    """Untied embeddings and lm_head plus the final norm."""
    return 2 * _VOCAB * hidden + hidden


def _choose_hidden(n: float) -> int:
    """Hidden size whose Llama-shaped model (i = 8h/3) has about n parameters; bisection."""
    low, high = 64.0, 1e6
    for _ in range(60):
        mid = (low + high) / 2
        layers = mid / _HIDDEN_PER_LAYER
        if _blocks_params(int(mid), 1, 8 * mid / 3) * layers + _fixed_params(int(mid)) < n:
            low = mid
        else:
            high = mid
    return max(_WIDTH_STEP, round(low / _WIDTH_STEP) * _WIDTH_STEP)


def _format_count(n: float) -> str:
    for scale, unit in ((1e12, "T"), (1e9, "B"), (1e6, "M")):
        if n >= scale:
            return f"{n / scale:.3g}{unit}"
    return f"{n:.3g}"


def model_from_param_count(spec: str | float) -> ModelArch:
    """Estimated Llama-style dimensions whose total is close to the given count."""
    count = parse_param_count(spec)
    if count is None or not math.isfinite(count) or not MIN_PARAMS <= count <= MAX_PARAMS:
        raise InvalidInputError("parameter_count", spec, VALID_COUNT)
    hidden = _choose_hidden(count)
    head_dim = 128 if hidden >= 2048 else 64
    layers = max(1, round(hidden / _HIDDEN_PER_LAYER))
    room = count - _fixed_params(hidden) - _blocks_params(hidden, layers, 0)
    intermediate = max(_WIDTH_STEP, round(room / (3 * hidden * layers) / _WIDTH_STEP) * _WIDTH_STEP)
    label = _format_count(count)
    return ModelArch(
        id=f"estimated-{label}",
        name=f"Llama-style decoder, ~{label} parameters (estimated)",
        family="llama",
        arch="decoder",
        hidden_size=hidden,
        num_layers=layers,
        num_heads=hidden // head_dim,
        num_kv_heads=hidden // head_dim,
        head_dim=head_dim,
        intermediate_size=intermediate,
        vocab_size=_VOCAB,
        max_position_embeddings=_CONTEXT,
        tied_embeddings=False,
        gated_mlp=True,
        norm="rmsnorm",
        source="estimated from a bare parameter count",
        estimated=True,
        assumptions=(
            f"dimensions estimated from {count:.2e} parameters assuming a Llama-style decoder "
            f"(SwiGLU MLP, multi-head attention, untied {_VOCAB}-token vocabulary)",
            "a real model of this size may differ in context length, vocabulary and head layout",
        ),
    )
