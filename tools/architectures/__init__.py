"""Model architectures: what a model is made of, and how a name, a config or a count becomes one.

`architecture` defines `ModelArch` (dimensions, layer kinds, exact parameter counts), `registry`
resolves a name, a Hugging Face config.json path or a bare parameter count to one, `hf_config`
reads and writes config.json files, and `param_guess` shapes a Llama-style model around a bare
parameter count when nothing else is known.
"""
