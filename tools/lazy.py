"""Names a package exports but imports only when first asked for, so that importing one of its
sub-modules stays light (`gpu-advisor estimate` loads no ranking; the CLI loads no agent)."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["on_first_use"]


def on_first_use(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` for `package`: each name of `homes` is imported from the module
    it maps to when first asked for and kept in the package; any other name is an
    AttributeError that names it."""

    def __getattr__(name: str) -> Any:
        if name not in homes:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(homes[name]), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
