"""The Catalog, Knowledge and Estimator tabs as views: filters and search that the count follows,
passages as Markdown, the estimate with its defaults in the interface language."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from assistant.web.views import CatalogFilters, catalog_view, estimator_view, passages_markdown
from knowledge.retrieval import Passage
from tests.fakes.artifacts import make_estimate
from tests.fakes.catalogs import make_instance
from tools.advice import Assumed
from tools.catalog.instances import Catalog
from tools.errors import UnknownNameError

NOW = datetime(2025, 7, 1, 12, tzinfo=UTC)


def _catalog() -> Catalog:
    return Catalog(
        [
            make_instance(),
            make_instance(
                provider="runpod",
                instance_type="h100",
                gpu="H100-SXM",
                price_per_hour=2.99,
                spot_price_per_hour=None,
                spot_available=False,
                regions=["eu-ro-1"],
            ),
        ]
    )


def test_the_count_follows_every_filter_and_the_search() -> None:
    catalog = _catalog()
    view = catalog_view(catalog, CatalogFilters(min_vram_gib=60), NOW, 120, "tr")
    assert view.count_markdown == "2 örnek türünden **1**"
    assert [row[0] for row in view.key.rows] == ["runpod/h100"], "only the 80 GiB GPU"
    spot = catalog_view(catalog, CatalogFilters(spot_only=True, max_price=1.0), NOW, 120, "en")
    assert [row[0] for row in spot.key.rows] == ["aws/g6e.xlarge"], "spot price 0.9 under 1.0"
    found = catalog_view(catalog, CatalogFilters(text="EU-RO h100"), NOW, 120, "en")
    assert found.count_markdown == "**1** of 2 instance types", "the search counts too"
    assert [row[0] for row in found.more.rows] == ["runpod/h100"]
    none = catalog_view(catalog, CatalogFilters(text="b200"), NOW, 120, "de")
    assert none.count_markdown == "**0** von 2 Instanztypen" and none.key.rows == []
    both = CatalogFilters(regions=["us-east-1"], providers=["runpod"])
    assert catalog_view(catalog, both, NOW, 120, "en").key.rows == [], "filters combine (AND)"
    with pytest.raises(UnknownNameError, match="provider"):
        catalog_view(catalog, CatalogFilters(providers=["nope"]), NOW, 120, "en")


def test_passages_markdown_shows_title_topic_language_text_and_source() -> None:
    passage = Passage(
        topic="provider/spot-vs-on-demand",
        lang="nl",
        title="Spot of on-demand",
        text="Tekst.",
        source="knowledge/docs/nl/x.md",
        score=0.5,
        chunk_id="a#nl#0",
        query_lang="tr",
        lang_fallback=True,
    )
    assert passages_markdown([passage]) == (
        "### Spot of on-demand\n`provider/spot-vs-on-demand` · **nl** ↩\n\nTekst.\n\n"
        "<sub>knowledge/docs/nl/x.md</sub>"
    )
    assert passages_markdown([]) == ""


def test_the_estimator_lists_its_defaults_in_the_interface_language() -> None:
    assumed = [
        Assumed(field="precision", value="bf16-mixed", reason="TRL's default"),
        Assumed(field="seq_len", value=2048, reason="2,048 tokens"),
    ]
    view = estimator_view(make_estimate(), assumed, ["H100"], "fr")
    lines = view.assumptions_markdown.splitlines()
    assert lines[:3] == [
        "**Valeurs par défaut pour ce qui était libre**",
        "- précision\u00a0: précision mixte bf16",
        "- longueur de séquence\u00a0: 2\u202f048",
    ]
    assert lines[4:] == ["**Comment l’estimation compte (en anglais)**", "- hand-built for tests"]
    assert "H100-SXM 80\u00a0GiB" in view.chart_svg and view.parts.headers[0] == "Mémoire par GPU"
