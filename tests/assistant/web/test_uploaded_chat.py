"""An uploaded config.json is the job's model for the chat too: the chat's tools estimate and
rank the uploaded architecture (read from the turn's context), named as the file names it."""

from __future__ import annotations

import json
from pathlib import Path

from assistant.agent.conversation import Assistant, Session
from assistant.agent.events import ToolEnd
from assistant.web.uploads import model_from_upload
from tests.fakes.app import TinyKnowledge, make_settings
from tests.fakes.catalogs import web_catalog
from tests.fakes.jobs import LLAMA_8B_CONFIG
from tools.memory import MemoryEstimate
from tools.ranking import RankResult


def _chat_after_upload(tmp_path: Path, config: dict[str, object], message: str) -> list[ToolEnd]:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    session = Session()
    session.state = session.state.model_copy(update={"model": model_from_upload(path)})
    settings = make_settings(tmp_path / "data")
    assistant = Assistant(settings, knowledge=TinyKnowledge(), catalog=web_catalog())
    turn = assistant.respond(message, session, lang="en")
    ends = [e for e in turn if isinstance(e, ToolEnd)]
    assert turn.result.error_id is None
    order = {"estimate_memory": 0, "rank_instances": 1}  # parallel calls end in any order
    return sorted(ends, key=lambda e: order.get(e.name, 2))


def test_the_chats_tools_use_the_uploaded_dimensions(tmp_path: Path) -> None:
    config = LLAMA_8B_CONFIG
    ends = _chat_after_upload(tmp_path, config, "QLoRA, 100M tokens. Which GPU?")
    assert [(e.name, e.status, e.args["model"]) for e in ends] == [
        ("estimate_memory", "success", "my-llama"),
        ("rank_instances", "success", "my-llama"),
    ], "called by the upload's name"
    estimate = ends[0].artifact
    assert isinstance(estimate, MemoryEstimate) and estimate.model_name == "my-llama"
    assert estimate.total_params == 8_030_261_248, "the file's own dimensions, not a guess"
    ranking = ends[1].artifact
    assert isinstance(ranking, RankResult) and ranking.job.model == "my-llama"


def test_a_config_without_a_name_is_your_config(tmp_path: Path) -> None:
    unnamed = {k: v for k, v in LLAMA_8B_CONFIG.items() if k != "_name_or_path"}
    ends = _chat_after_upload(tmp_path, unnamed, "LoRA please, spot is fine")
    estimate = ends[0].artifact
    assert ends[0].args["model"] == "your config"
    assert isinstance(estimate, MemoryEstimate) and estimate.model_name == "your config"
    assert "(estimated)" not in estimate.model_name
