"""Shared fixtures. No test touches the network or the user's home: paths point at tmp_path."""

from __future__ import annotations

from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[2] / "shared"


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("GPU_ADVISOR_DATA_DIR", str(tmp_path / "data"))
    for var, value in {
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "ORT_DISABLE_TELEMETRY": "1",
        "GRADIO_ANALYTICS_ENABLED": "False",
        "ANONYMIZED_TELEMETRY": "False",
        # the app's background price refresh is on by default; tests serve their own prices
        "GPU_ADVISOR_CATALOG_REFRESH_HOURS": "0",
    }.items():
        monkeypatch.setenv(var, value)


@pytest.fixture
def shared_dir() -> Path:
    """The read-only ../shared folder; tests that need it skip, saying why, when it is absent."""
    if not SHARED.is_dir():
        pytest.skip(f"../shared is not present at {SHARED}")
    return SHARED
