from __future__ import annotations

import json
from pathlib import Path

import pytest

from mavend.router.decision import Intent
from mavend.router.evaluate import EvalRow, evaluate_router, format_report, read_rows
from tests.scripted import LOW, Classified, ScriptedClassifier, make_router


def scripted_router():
    return make_router(
        None,
        ScriptedClassifier(
            {
                "what is the weather like": Classified(Intent.QUERY, 0.8, {Intent.QUERY: 0.8}),
                "tell me something funny": Classified(Intent.CHAT, 0.8, {Intent.CHAT: 0.8}),
                "can you fly a plane": Classified(Intent.ACT, 0.3, dict.fromkeys(Intent, 0.3)),
                "buy a boat": Classified(Intent.NOTE, 0.7, {Intent.NOTE: 0.7}),
            },
            LOW,
        ),
    )


ROWS = [
    EvalRow("pause the music", "act", "high"),  # grammar: right
    EvalRow("what is the weather like", "query", "high"),  # classifier: right
    EvalRow("tell me something funny", "query", "medium", ("chat",)),  # wrong, lenient right
    EvalRow("can you fly a plane", "oos", "medium"),  # clarified: right on oos
    EvalRow("buy a boat", "oos", "low", ("query",)),  # answered on oos: wrong
    EvalRow("blorp", "note", "high"),  # clarified in scope: wrong
]


def test_scores_follow_the_rules() -> None:
    summary = evaluate_router(scripted_router(), ROWS).summary()
    assert summary["n"] == 6
    assert summary["strict_n"] == 3 and summary["strict_accuracy"] == pytest.approx(2 / 3, abs=1e-4)
    assert summary["lenient_accuracy"] == pytest.approx(4 / 6, abs=1e-4)
    assert summary["clarify_rate_oos"] == 0.5
    assert summary["clarify_rate_in_scope"] == 0.25
    assert summary["confusion"]["oos"] == {"clarify": 1, "note": 1}
    assert summary["per_intent"]["act"] == {"precision": 1.0, "recall": 1.0, "n": 1}
    assert summary["per_intent"]["query"]["recall"] == 0.5
    assert {"grammar", "classifier", "total"} <= set(summary["latency_ms"])
    assert "strict accuracy" in format_report(summary, 1.0)


def test_out_of_scope_writes_and_sources_are_reported() -> None:
    rows = [
        EvalRow("can you fly a plane", "oos", "medium", source="clinc150:oos"),  # asked
        EvalRow("buy a boat", "oos", "low", ("query",), source="clinc150:oos"),  # a note: a write
        EvalRow("what is the weather like", "query", "high", source="hwu64:weather_query"),
        EvalRow("pause the music", "act", "high", source="hwu64:play_music"),
    ]
    summary = evaluate_router(scripted_router(), rows).summary()
    assert summary["harmful_rate_oos"] == 0.5
    assert summary["per_source"]["clinc150"] == {
        "n": 2, "strict_n": 0, "strict_accuracy": 0.0, "lenient_accuracy": 0.5
    }
    assert summary["per_source"]["hwu64"]["strict_accuracy"] == 1.0
    assert "harmful" in format_report(summary, 1.0) and "clinc150" in format_report(summary, 1.0)


def test_our_own_out_of_scope_labels_score_as_asking() -> None:
    rows = [EvalRow("can you fly a plane", "unsupported"), EvalRow("buy a boat", "fragment")]
    summary = evaluate_router(scripted_router(), rows).summary()
    assert summary["clarify_rate_oos"] == 0.5 and summary["strict_accuracy"] == 0.5


def test_rows_without_confidence_all_count_as_strict() -> None:
    rows = [EvalRow("pause the music", "act"), EvalRow("blorp", "act")]
    summary = evaluate_router(scripted_router(), rows).summary()
    assert summary["strict_n"] == 2 and summary["strict_accuracy"] == 0.5


def test_read_rows_names_a_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps({"text": "a", "intent": "act"}) + "\n\n{broken\n")
    with pytest.raises(ValueError, match=r"rows\.jsonl:3"):
        read_rows(path)
