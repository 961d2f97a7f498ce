"""The bank, the grammars and the prompt hold nothing copied from the measurement data.

`../shared/eval/*.jsonl` (beside the repository) is written outside the project
and used only to measure the router; a row that also sits in the classifier's
bank, a grammar or the LLM prompt, or a near copy of one (a word or two
changed), would make every figure measured on it worthless. This test reads
the eval files through a path relative to the repository and fails, never
skips, when they are missing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path

import pytest
from hassil.sample import sample_intents
from rapidfuzz import fuzz, process

from mavend import paths
from mavend.config import Settings
from mavend.router import prompt
from mavend.router.examples import builtin_example_files
from mavend.router.grammar import CommandGrammar

ROOT = Path(__file__).resolve().parent.parent
EVAL_DIR = ROOT.parent / "shared" / "eval"
OWN_TEST_DIR = Path(__file__).parent / "data" / "router_own"
# Our own query rows labelled with where the answer lives, and personal questions.
SOURCE_TEST_DIR = Path(__file__).parent / "data" / "router_source"
# fuzz.ratio (0-100, an edit-distance similarity) at or above which two normalized
# texts count as near duplicates: "set an alarm for seven am" / "set my alarm for
# seven am" is 92, "turn on the lamp" / "turn on the lights" is 82.
NEAR = 90.0


def norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.casefold()).split())


@pytest.fixture(scope="module")
def eval_texts() -> list[str]:
    files = sorted(EVAL_DIR.glob("*.jsonl"))
    if not files:
        pytest.fail(
            f"no evaluation files in {EVAL_DIR}: the shared/ folder beside the repository "
            "holds them; without it this guard cannot run"
        )
    texts = []
    for path in files:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                texts.append(norm(json.loads(line)["text"]))
    return sorted(set(texts))


def copies(ours: Iterable[str], eval_texts: list[str]) -> list[tuple[str, str, float]]:
    """(ours, eval, similarity) for every text of ours within NEAR of an eval text."""
    mine = sorted({norm(t) for t in ours if norm(t)})
    matrix = process.cdist(mine, eval_texts, scorer=fuzz.ratio, score_cutoff=NEAR, workers=1)
    found = []
    for i, j in zip(*matrix.nonzero(), strict=True):
        found.append((mine[i], eval_texts[j], float(matrix[i, j])))
    return found


def bank_texts() -> list[str]:
    return [
        json.loads(line)["text"]
        for path in builtin_example_files()
        for line in path.read_text(encoding="utf-8").splitlines()
    ]


def own_test_texts() -> list[str]:
    return [
        json.loads(line)["text"]
        for path in sorted([*OWN_TEST_DIR.glob("*.jsonl"), *SOURCE_TEST_DIR.glob("*.jsonl")])
        for line in path.read_text(encoding="utf-8").splitlines()
    ]


def grammar_sentences() -> list[str]:
    """Every sentence the command grammars expand to (wildcard templates aside)."""
    settings = Settings()
    grammar = CommandGrammar.from_dir(paths.grammars_dir(), settings.acts)
    return [text for _, text in sample_intents(grammar._intents, grammar._slot_lists)]


def test_the_guard_catches_exact_and_near_copies(eval_texts: list[str]) -> None:
    row = eval_texts[len(eval_texts) // 2]
    words = row.split()
    edited = " ".join([*words[:-1], words[-1] + "s"])
    assert copies([row.upper() + "!", edited], eval_texts)


def test_the_bank_has_no_copy_of_an_eval_row(eval_texts: list[str]) -> None:
    texts = bank_texts()
    assert len(texts) >= 3000
    assert copies(texts, eval_texts) == []


def test_our_own_test_utterances_are_no_copies_either(eval_texts: list[str]) -> None:
    assert copies(own_test_texts(), eval_texts) == []


# A command grammar must cover the bare commands everybody says ("next", "forget it",
# "decrease the volume"), and so do the public datasets: a phrase this short is
# nobody's writing to copy. Longer expansions are held to the same rule as the bank.
GRAMMAR_EXEMPT_WORDS = 4


def test_the_grammars_expand_to_no_eval_row(eval_texts: list[str]) -> None:
    sentences = grammar_sentences()
    assert len(sentences) > 100
    longer = [s for s in sentences if len(s.split()) > GRAMMAR_EXEMPT_WORDS]
    assert copies(longer, eval_texts) == []


def test_the_prompt_examples_are_no_eval_rows(eval_texts: list[str]) -> None:
    utterances = [e.utterance for e in prompt.EXAMPLES]
    assert utterances
    assert copies(utterances, eval_texts) == []
