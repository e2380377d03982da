"""Fakes and fixtures for the knowledge tests: hash embeddings, a small entry folder in tmp_path."""

from __future__ import annotations

import hashlib
import re
import textwrap
from pathlib import Path

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings

from knowledge.config import KnowledgeConfig


class HashEmbeddings(Embeddings):
    """Deterministic bag-of-words embeddings: each lowercase word adds +-1 to hashed dimensions.

    Texts sharing words get similar vectors, so dense ranking is meaningful without a model.
    `fail_after` makes `embed_documents` raise once that many texts were embedded (failed builds).
    """

    def __init__(self, dim: int = 64, salt: str = "", fail_after: int | None = None) -> None:
        self.dim = dim
        self.salt = salt
        self.fail_after = fail_after
        self.embedded = 0
        self.embedder_id = f"hash-{dim}{'-' + salt if salt else ''}"

    def _vector(self, text: str) -> list[float]:
        vec = np.zeros(self.dim, dtype=np.float64)
        for word in re.findall(r"\w+", text.lower()):
            digest = hashlib.blake2b((self.salt + word).encode(), digest_size=8).digest()
            vec[digest[0] % self.dim] += 1.0 if digest[1] % 2 else -1.0
        norm = np.linalg.norm(vec)
        return (vec / norm if norm else np.full(self.dim, self.dim**-0.5)).tolist()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if self.fail_after is not None and self.embedded + len(texts) > self.fail_after:
            raise RuntimeError("simulated embedding failure")
        self.embedded += len(texts)
        return [self._vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vector(text)


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
