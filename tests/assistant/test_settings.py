"""Settings read from the environment as people write the variables."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pydantic import ValidationError

from assistant.settings import Settings


@pytest.mark.parametrize(
    ("value", "paths"),
    [
        ("/srv/quotes.yaml", [Path("/srv/quotes.yaml")]),
        (f"/a.csv{os.pathsep}/b.yaml", [Path("/a.csv"), Path("/b.yaml")]),
        ('["/a.csv", "/b.yaml"]', [Path("/a.csv"), Path("/b.yaml")]),
        ("", []),
    ],
)
def test_catalog_paths_as_a_path_a_list_or_json(
    monkeypatch: pytest.MonkeyPatch, value: str, paths: list[Path]
) -> None:
    """A plain path used to stop the app with a traceback (only JSON lists parsed)."""
    monkeypatch.setenv("GPU_ADVISOR_CATALOG_PATHS", value)
    assert Settings().catalog_paths == paths


def test_broken_json_is_an_error_naming_the_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPU_ADVISOR_CATALOG_PATHS", '["/a.csv"')
    with pytest.raises(ValidationError, match="catalog_paths"):
        Settings()
