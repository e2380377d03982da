"""The knowledge-coverage calibration report (benchmarks/retrieval/scope.py): band counts and
out-of-scope precision and recall, on a knowledge base that scores by a table."""

from __future__ import annotations

from benchmarks.retrieval import scope


class TableSupport:
    def __init__(self, table: dict[str, float]) -> None:
        self.table = table

    def support(self, text: str, lang: str) -> float:
        return self.table.get(text, 0.5)


def test_bands_count_below_between_and_above() -> None:
    kb = TableSupport({"a": 0.1, "b": 0.5, "c": 0.9, "d": 0.35})
    questions = [("en", t) for t in "abcd"]
    assert scope.bands(kb, questions, 0.35, 0.6) == {"below": 1, "between": 2, "above": 1}


def test_report_states_precision_and_recall_of_below_as_out_of_scope(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    inside, outside = [("en", "in1"), ("en", "in2")], [("en", "out1"), ("en", "out2")]
    monkeypatch.setattr(scope, "dev_questions", lambda: (inside, outside))
    monkeypatch.setattr(scope, "test_questions", lambda: (inside, outside))
    kb = TableSupport({"in1": 0.9, "in2": 0.2, "out1": 0.1, "out2": 0.5})
    dev = scope.report(kb, 0.35, 0.6)["dev"]
    assert dev["out_of_scope_precision"] == 0.5, "one of the two below is in scope"
    assert dev["out_of_scope_recall"] == 0.5
    assert dev["in_scope_above"] == 0.5


def test_the_labelled_questions_load() -> None:
    inside, outside = scope.dev_questions()
    assert len(inside) > 250 and len(outside) > 60
    held_in, held_out = scope.test_questions()
    assert len(held_in) > 300 and len(held_out) >= 10
