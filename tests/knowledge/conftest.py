"""Fixtures of the knowledge tests: a small entry folder in tmp_path (the hash embeddings are
tests.fakes.embeddings)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from knowledge.config import KnowledgeConfig
from tests.fakes.embeddings import HashEmbeddings

__all__ = ["HashEmbeddings", "write_entry"]


def write_entry(root: Path, topic: str, lang: str, title: str, body: str, questions=()) -> Path:
    """Write one entry file in the knowledge/docs layout and return its path."""
    kind = "faq" if topic.startswith("faq/") else "guide"
    lines = ["---", f"topic: {topic}", f"lang: {lang}", f'title: "{title}"', f"kind: {kind}"]
    if questions:
        lines.append("questions:")
        lines.extend(f'  - "{q}"' for q in questions)
    path = root / lang / (topic.replace("/", "__") + ".md")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join([*lines, "---", textwrap.dedent(body).strip(), ""]), encoding="utf-8")
    return path


SPOT_Q = ("Can I train on spot instances?", "Is preemptible capacity fine?", "Spot for training?")


@pytest.fixture
def mini_docs(tmp_path: Path) -> Path:
    """Three topics; `specs/vram` and the FAQ in en and nl, `specs/interconnect` in en only."""
    root = tmp_path / "docs"
    write_entry(
        root,
        "specs/vram",
        "en",
        "VRAM is the hard limit",
        """
        Video memory decides the largest model and batch that fit on one card.

        Datacenter cards with HBM carry far more memory than consumer cards.
        """,
    )
    write_entry(
        root,
        "specs/vram",
        "nl",
        "VRAM is de harde grens",
        """
        Het videogeheugen bepaalt het grootste model en de batch die op een kaart passen.

        Datacenterkaarten met HBM hebben veel meer geheugen dan consumentenkaarten.
        """,
    )
    write_entry(
        root,
        "specs/interconnect",
        "en",
        "Interconnect between GPUs",
        "NVLink joins GPUs inside a node; InfiniBand joins nodes for gradient sync.",
    )
    write_entry(
        root,
        "faq/training-spot",
        "en",
        "Are spot instances safe for training?",
        "Yes, when you checkpoint often and resume cleanly after an interruption.",
        SPOT_Q,
    )
    write_entry(
        root,
        "faq/training-spot",
        "nl",
        "Zijn spot-instanties veilig voor training?",
        "Ja, als je vaak een checkpoint schrijft en na een onderbreking netjes hervat.",
        ("Kan ik op spot trainen?", "Is onderbreekbare capaciteit goed?", "Spot voor training?"),
    )
    return root


@pytest.fixture
def kb_config(tmp_path: Path) -> KnowledgeConfig:
    return KnowledgeConfig(data_dir=tmp_path / "index")
