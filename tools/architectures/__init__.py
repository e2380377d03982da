"""Model architectures: what a model is made of, and how a name, a config or a count becomes one.

`architecture` defines `ModelArch` (dimensions, layer kinds, exact parameter counts), `registry`
resolves a name, a Hugging Face config.json path or a bare parameter count to one, `hf_config`
reads and writes config.json files, and `param_guess` shapes a Llama-style model around a bare
parameter count when nothing else is known.
"""

from tools.architectures.architecture import ModelArch, ParamBreakdown
from tools.architectures.hf_config import model_from_hf_config, to_hf_config
from tools.architectures.param_guess import model_from_param_count
from tools.architectures.registry import list_models, lookup_model, resolve_model

__all__ = [
    "ModelArch",
    "ParamBreakdown",
    "list_models",
    "lookup_model",
    "model_from_hf_config",
    "model_from_param_count",
    "resolve_model",
    "to_hf_config",
]
