"""`KnowledgeBase`: owns the index (build, open, verify, rebuild) and answers searches.

Searching never waits long on Chroma and never fails because of it: when the vector store is down,
slow or unreadable, the dense systems are skipped, BM25 ranks alone and the passages say so
(`Passage.lexical_only`, `SearchReport`). An index that is out of date but cannot be rebuilt now
(its folder is read-only, or the Chroma server is down) is searched as it is, with a warning.
The last `CACHED_SEARCHES` searches that ran every system are kept until the index changes: the
chat's caveat searches repeat one query per language for every user.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
from langchain_core.embeddings import Embeddings
from pydantic import BaseModel, Field

from knowledge.config import KnowledgeConfig
from knowledge.documents.chunking import (
    DEFAULT_MAX_WORDS,
    Chunk,
    chunk_entries,
    chunk_text_file,
    source_files,
)
from knowledge.documents.entries import BUILTIN_DOCS_DIR, load_entries
from knowledge.embeddings import embedder_id, make_embeddings
from knowledge.errors import IndexCorruptError, StoreUnavailableError
from knowledge.index.dense import DenseGuard
from knowledge.index.store import IndexStore, OpenIndex, Progress, content_hash
from knowledge.langid import detect_language
from knowledge.retrieval.fusion import FusionParams, fuse, pick_passages
from knowledge.retrieval.jobs import prefer_twins
from knowledge.retrieval.lexical import LanguageBM25
from knowledge.retrieval.passages import Passage, SearchReport
from knowledge.retrieval.recent import Recent
from knowledge.retrieval.sentences import with_excerpts
from tools.enums import Method
from tools.errors import InvalidInputError, write_probe
from tools.languages import LANGUAGES
from tools.redaction import redact_url

log = logging.getLogger("knowledge")

_LANG_CODE = re.compile(r"^[a-z]{2,3}$")
JOB_METHODS: tuple[Method, ...] = ("pretrain", "full", "lora", "qlora")
MAX_K = 50
DENSE_SYSTEMS = ("dense", "dense_lang")
CACHED_SEARCHES = 256


class IndexStats(BaseModel):
    """What `kb stats` reports about the index."""

    status: Literal["ready", "missing", "stale", "corrupt", "degraded"]
    detail: str = Field(
        description="why the index is stale, corrupt or degraded (built, but its vector store "
        "cannot be used now: searches use BM25 alone); empty when ready"
    )
    data_dir: str
    store: str = Field(description="'embedded' or the Chroma server URL, credentials removed")
    writable: bool = Field(
        default=True, description="whether the data folder can be written (rebuilds need it)"
    )
    embedder_id: str | None = None
    chunk_count: int = 0
    topic_count: int = 0
    chunks_per_language: dict[str, int] = Field(default_factory=dict)
    extra_sources: list[str] = Field(default_factory=list)
    built_at: str | None = None
    build_seconds: float | None = Field(default=None, description="wall time of the build, s")


class KnowledgeBase:
    """The searchable knowledge base of one data folder.

    `extra_sources=None` keeps whatever extra folders the current index was built with;
    `()` means the built-in entries only. `docs_dir=None` leaves the built-in entries out.
    """

    def __init__(
        self,
        config: KnowledgeConfig,
        *,
        docs_dir: Path | None = BUILTIN_DOCS_DIR,
        extra_sources: Sequence[Path] | None = None,
        embeddings: Embeddings | None = None,
        fusion: FusionParams | None = None,
        max_words: int = DEFAULT_MAX_WORDS,
        progress: Progress | None = None,
    ) -> None:
        self.config = config
        self.docs_dir = docs_dir
        self.extra_sources = None if extra_sources is None else [Path(p) for p in extra_sources]
        self.embeddings = embeddings or make_embeddings(
            config.embedder, hub_online=config.hub_online
        )
        self.embedder_id = embedder_id(self.embeddings)
        self.fusion = fusion or FusionParams()
        self.max_words = max_words
        self.progress = progress
        self.store = IndexStore(config)
        self.dense = DenseGuard(config, self.store, self.embeddings)
        self._index: OpenIndex | None = None
        self._bm25: LanguageBM25 | None = None
        self._row: dict[str, int] = {}
        self._languages: set[str] = set()
        # kept searches of the open index (not degraded ones): see the module docstring
        self._reports: Recent[tuple[object, ...], SearchReport] = Recent(CACHED_SEARCHES)

    # -- sources -----------------------------------------------------------------------------

    def load_chunks(self, extra_sources: Sequence[Path]) -> list[Chunk]:
        """Chunks of the built-in entries plus every .md/.txt file under `extra_sources`."""
        chunks = chunk_entries(load_entries(self.docs_dir), self.max_words) if self.docs_dir else []
        for root in extra_sources:
            if not root.exists():
                raise InvalidInputError("source", str(root), "an existing folder or file")
            base = root if root.is_dir() else root.parent
            for path in source_files(root):
                label = f"{base.name}/{path.relative_to(base).as_posix()}"
                chunks.extend(chunk_text_file(path, label, _detect_code, self.max_words))
        seen: set[str] = set()
        for chunk in chunks:
            if chunk.id in seen:
                raise InvalidInputError("chunk id", chunk.id, "unique ids (two sources clash)")
            seen.add(chunk.id)
        return chunks

    def _wanted_sources(self, current: OpenIndex | None) -> list[Path]:
        if self.extra_sources is not None:
            return self.extra_sources
        recorded = [Path(p) for p in current.manifest.extra_sources] if current else []
        missing = [p for p in recorded if not p.exists()]
        for path in missing:
            log.warning("extra source %s of the index is gone; leaving it out", path)
        return [p for p in recorded if p.exists()]

    # -- index lifecycle ---------------------------------------------------------------------

    def build(self) -> IndexStats:
        """Rebuild the index from the sources now, whatever state it is in."""
        self.close()
        current = self._try_open()
        sources = self._wanted_sources(current)
        if current is not None:
            current.close()
        self._build(self.load_chunks(sources), sources)
        return self.stats()

    def open(self) -> OpenIndex:
        """Open the current index, rebuilding it when missing, stale or corrupt (logged); a stale
        index that cannot be rebuilt now is used as it is (logged)."""
        if self._index is not None:
            return self._index
        current = self._try_open()
        sources = self._wanted_sources(current)
        chunks = self.load_chunks(sources)
        reason = self._stale_reason(current, chunks, sources)
        if current is not None and reason:
            blocker, where = self._rebuild_blocker(current), self.config.data_dir
            if blocker:
                log.warning(
                    "knowledge index in %s is out of date (%s), but %s; searching it as it is",
                    where,
                    reason,
                    blocker,
                )
            else:
                log.info("knowledge index in %s is out of date (%s); rebuilding", where, reason)
                current.close()
                current = None
        if current is None:
            current = self._build(chunks, sources)
        self._attach(current)
        return current

    def _rebuild_blocker(self, current: OpenIndex) -> str:
        """Why the index cannot be rebuilt now ('' when it can)."""
        if current.store_error is not None:
            return f"its vector store cannot be used now ({current.store_error})"
        cause = write_probe(self.config.data_dir)
        return f"its folder cannot be written ({cause})" if cause else ""

    def _try_open(self) -> OpenIndex | None:
        try:
            return self.store.open(self.embeddings)
        except IndexCorruptError as exc:
            log.warning(
                "knowledge index in %s is corrupt (%s); rebuilding", self.config.data_dir, exc
            )
            return None

    def _stale_reason(
        self, current: OpenIndex | None, chunks: list[Chunk], sources: list[Path]
    ) -> str:
        if current is None:
            return ""
        manifest = current.manifest
        if manifest.embedder_id != self.embedder_id:
            return f"embedder changed: {manifest.embedder_id} -> {self.embedder_id}"
        if manifest.content_hash != content_hash(chunks):
            return "content changed"
        if manifest.extra_sources != [str(p) for p in sources]:
            return "extra sources changed"
        return ""

    def _build(self, chunks: list[Chunk], sources: list[Path]) -> OpenIndex:
        log.info("building knowledge index: %d chunks with %s", len(chunks), self.embedder_id)
        self.store.build(
            chunks, self.embeddings, self.embedder_id, [str(p) for p in sources], self.progress
        )
        opened = self.store.open(self.embeddings)
        if opened is None:
            raise IndexCorruptError(
                f"index in {self.config.data_dir} vanished right after its build"
            )
        return opened

    def _attach(self, index: OpenIndex) -> None:
        self._index = index
        self._reports.clear()
        self._row = {chunk.id: i for i, chunk in enumerate(index.chunks)}
        self._languages = {chunk.lang for chunk in index.chunks}
        self._bm25 = LanguageBM25(index.chunks) if "bm25" in self._systems() else None
        self.dense.start(index)

    def close(self) -> None:
        if self._index is not None:
            self._index.close()
        self._index, self._bm25, self._row = None, None, {}
        self._reports.clear()

    # -- search ------------------------------------------------------------------------------

    def _systems(self) -> list[str]:
        """Ranking systems in use: by retrieval mode, and only those with a positive weight."""
        mode = self.config.retrieval
        systems = {"hybrid": (*DENSE_SYSTEMS, "bm25"), "dense": DENSE_SYSTEMS, "bm25": ("bm25",)}
        return [s for s in systems[mode] if self.fusion.weights.get(s, 0.0) > 0]

    def search(
        self, query: str, lang: str | None = None, k: int = 5, job: Method | None = None
    ) -> list[Passage]:
        """The `k` best passages for `query`, one per topic, in `lang` (detected when None);
        each says whether BM25 ranked it alone because Chroma failed (`lexical_only`). `job`, the
        method of the conversation's job, decides between twin entries written for pre-training
        and for fine-tuning (`knowledge.retrieval.jobs`)."""
        return self.search_report(query, lang, k, job).passages

    def search_report(
        self, query: str, lang: str | None = None, k: int = 5, job: Method | None = None
    ) -> SearchReport:
        """`search`, with whether (and why) the dense search could not run."""
        text = query.strip()
        if not text:
            raise InvalidInputError("query", query, "a non-empty question")
        if not 1 <= k <= MAX_K:
            raise InvalidInputError("k", k, f"an integer from 1 to {MAX_K}")
        if lang is not None and not _LANG_CODE.match(lang):
            raise InvalidInputError(
                "lang", lang, f"an ISO 639-1 code such as {', '.join(LANGUAGES)}"
            )
        if job is not None and job not in JOB_METHODS:
            raise InvalidInputError("job", job, f"one of {', '.join(JOB_METHODS)} or none")
        query_lang = lang or self._query_language(text)
        key = (text, query_lang, k, job, self.fusion.model_dump_json())
        kept = self._reports.get(key)
        if kept is not None:
            return kept
        rankings, failure = self._rankings(text, query_lang, self._systems())
        fusion = self.fusion
        if failure and fusion.weights.get("bm25", 0.0) <= 0:  # dense-only configuration
            fusion = fusion.model_copy(update={"weights": {**fusion.weights, "bm25": 1.0}})
        chunks = self.open().chunks
        groups, chunk_scores = fuse(rankings, chunks, fusion)
        groups = prefer_twins(groups, text, job)
        passages = pick_passages(
            groups, chunk_scores, chunks, query_lang, k, lexical_only=bool(failure)
        )
        passages = with_excerpts(passages, text, chunks, self._lexicon())
        report = SearchReport(
            passages=passages, lexical_only=bool(failure), degraded_reason=failure
        )
        return report if failure else self._reports.put(key, report)

    def support(self, query: str, lang: str) -> float:
        """How well the entries cover `query` in `lang`: `LanguageBM25.coverage` (0 to 1)."""
        return self._lexicon().coverage(query, lang)

    def _query_language(self, text: str) -> str:
        """The language of a query given none: for a short query, the language whose entries
        use its telling words (`LanguageBM25.language_of`), else the detector's."""
        return self._lexicon().language_of(text) or detect_language(text).code

    def _lexicon(self) -> LanguageBM25:
        """The BM25 indexes by language (built on first use when BM25 is not a ranking system)."""
        if self._bm25 is None:
            self._bm25 = LanguageBM25(self.open().chunks)
        return self._bm25

    def rank_systems(
        self, text: str, query_lang: str, systems: Sequence[str] | None = None
    ) -> dict[str, list[int]]:
        """Each system's chunk ranking (rows of `open().chunks`, best first) before fusion;
        `systems` defaults to those the configuration uses (a dense system Chroma cannot serve
        now is left out). The benchmark tunes fusion on these."""
        names = list(systems) if systems is not None else self._systems()
        return self._rankings(text, query_lang, names)[0]

    def _rankings(
        self, text: str, query_lang: str, names: list[str]
    ) -> tuple[dict[str, list[int]], str]:
        """(rankings by system, why the dense systems were skipped or ''). When Chroma fails,
        BM25 ranks instead, also where the configuration leaves it out."""
        index = self.open()
        rankings: dict[str, list[int]] = {}
        failure = ""
        dense = [n for n in names if n in DENSE_SYSTEMS]
        vector = self.embeddings.embed_query(text) if dense else []
        for name in dense:
            try:
                rankings[name] = self._rank_dense(name, vector, query_lang, index)
            except StoreUnavailableError as exc:
                failure = str(exc)
                break
        if failure:
            rankings = {}
        for name in [n for n in names if n == "bm25"] or (["bm25"] if failure else []):
            rankings[name] = self._rank_bm25(text, query_lang, index)
        return rankings, failure

    def _rank_bm25(self, text: str, query_lang: str, index: OpenIndex) -> list[int]:
        """Chunk rows with a positive BM25 score, best first."""
        scores = self._lexicon().scores(text, query_lang if query_lang in LANGUAGES else None)
        ranked = np.argsort(-scores, kind="stable")
        return [int(i) for i in ranked if scores[i] > 0]

    def _rank_dense(
        self, system: str, vector: list[float], query_lang: str, index: OpenIndex
    ) -> list[int]:
        """Chunk rows, best first, by dense similarity over all languages or over the query's
        language only; StoreUnavailableError when Chroma cannot answer."""
        where: dict[str, Any] | None = None
        if system == "dense_lang":
            if query_lang not in self._languages:
                return []
            where = {"lang": query_lang}
        count = index.manifest.chunk_count
        if count == 0:
            return []
        ids = self.dense.nearest(index, vector, min(self.fusion.dense_candidates, count), where)
        return [self._row[chunk_id] for chunk_id in ids if chunk_id in self._row]

    # -- stats -------------------------------------------------------------------------------

    def stats(self) -> IndexStats:
        """The state of the index, without building it."""
        base: dict[str, Any] = {
            "data_dir": str(self.config.data_dir),
            "store": redact_url(self.config.chroma_url) if self.config.chroma_url else "embedded",
            "writable": write_probe(self.config.data_dir) is None,
        }
        try:
            current = self._index or self.store.open(self.embeddings)
        except IndexCorruptError as exc:
            return IndexStats(status="corrupt", detail=str(exc), **base)
        if current is None:
            return IndexStats(status="missing", detail="no index built yet", **base)
        sources = self._wanted_sources(current)
        reason = self._stale_reason(current, self.load_chunks(sources), sources)
        manifest = current.manifest
        status: Literal["stale", "ready", "degraded"] = "stale" if reason else "ready"
        if current.store_error is not None:
            status, reason = "degraded", f"{current.store_error}; searches use BM25 alone"
        stats = IndexStats(
            status=status,
            detail=reason,
            embedder_id=manifest.embedder_id,
            chunk_count=manifest.chunk_count,
            topic_count=len({c.topic for c in current.chunks if c.topic}),
            chunks_per_language=dict(sorted(Counter(c.lang for c in current.chunks).items())),
            extra_sources=manifest.extra_sources,
            built_at=manifest.built_at,
            build_seconds=manifest.build_seconds,
            **base,
        )
        if current is not self._index:
            current.close()
        return stats


def builtin_chunks(max_words: int = DEFAULT_MAX_WORDS) -> list[Chunk]:
    """The chunks of the built-in entries, as a default `KnowledgeBase` indexes them (the shipped
    seed vectors cover exactly these)."""
    return chunk_entries(load_entries(BUILTIN_DOCS_DIR), max_words)


def _detect_code(text: str) -> str:
    return detect_language(text).code
