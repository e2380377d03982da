"""on_first_use: a package's names imported when first asked for, kept, and unknown names
refused by name."""

from __future__ import annotations

import subprocess
import sys
import types

import pytest

from tools.lazy import on_first_use


def test_a_name_is_imported_on_first_use_and_kept() -> None:
    package = types.ModuleType("lazy_probe")
    package.__getattr__ = on_first_use("lazy_probe", {"dumps": "json"})  # type: ignore[method-assign]
    sys.modules["lazy_probe"] = package
    try:
        import json

        assert package.dumps is json.dumps
        assert "dumps" in vars(package)  # kept: later lookups do not import again
        with pytest.raises(AttributeError, match="module 'lazy_probe' has no attribute 'loads'"):
            _ = package.loads
    finally:
        del sys.modules["lazy_probe"]


def test_the_packages_using_it_load_their_names_only_when_asked() -> None:
    code = (
        "import sys, tools.advice, assistant\n"
        "assert 'tools.advice.request' not in sys.modules\n"
        "assert 'assistant.agent.conversation' not in sys.modules\n"
        "assert tools.advice.resolve_job.__module__ == 'tools.advice.request'\n"
        "assert assistant.Session.__module__ == 'assistant.agent.conversation'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
