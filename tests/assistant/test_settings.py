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


def test_the_background_refresh_is_on_by_default_and_0_turns_it_off(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Prices were 222 days old by default (issue 26, defect 7): the app now refreshes prices
    older than a day; 0 is the way to stay on the shipped and imported prices only."""
    monkeypatch.delenv("GPU_ADVISOR_CATALOG_REFRESH_HOURS", raising=False)
    assert Settings().catalog_refresh_hours == 24.0
    monkeypatch.setenv("GPU_ADVISOR_CATALOG_REFRESH_HOURS", "0")
    assert Settings().catalog_refresh_hours == 0.0
    monkeypatch.setenv("GPU_ADVISOR_CATALOG_REFRESH_HOURS", "-1")
    with pytest.raises(ValidationError, match="catalog_refresh_hours"):
        Settings()
