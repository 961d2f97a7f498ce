"""The routing policies with scripted seams: who is asked, whose answer counts."""

from __future__ import annotations

import pytest

from mavend.config import parse_settings
from mavend.router import PolicyName, build_router
from mavend.router.decision import Intent, Stage
from mavend.router.gate import UNSUPPORTED_QUESTION
from mavend.router.policy import MEASURED_POLICY, RoutePolicy, resolve_policy
from tests.scripted import LOW, NOW, Classified, Route, ScriptedClassifier, ScriptedLlm, make_router

TEXT = "could you sort out the thing for dinner"


def classifier(scores: dict[Intent, float], extra: dict[str, float] | None = None):
    best = max(scores, key=scores.__getitem__)
    return ScriptedClassifier({TEXT: Classified(best, scores[best], scores, extra or {})}, LOW)


def test_classifier_policy_never_asks_the_llm() -> None:
    llm = ScriptedLlm({TEXT: Route(Intent.CHAT, 0.99)})
    clf = classifier({Intent.NOTE: 0.4, Intent.REMINDER: 0.38, Intent.CHAT: 0.1})
    decision = make_router(llm, clf, name=PolicyName.CLASSIFIER).route(TEXT)
    assert llm.calls == []
    assert (decision.intent, decision.decided_by) == (Intent.NOTE, "classifier")


def test_classifier_policy_lets_the_llm_route_when_there_is_no_classifier() -> None:
    llm = ScriptedLlm({TEXT: Route(Intent.QUERY, 0.9)})
    decision = make_router(llm, None, name=PolicyName.CLASSIFIER).route(TEXT)
    assert llm.calls == [TEXT] and decision.intent == Intent.QUERY


def test_llm_first_follows_the_llm_and_falls_back_on_failure() -> None:
    clf = classifier({Intent.NOTE: 0.8, Intent.QUERY: 0.1})
    sure = ScriptedLlm({TEXT: Route(Intent.QUERY, 0.7)})
    decision = make_router(sure, clf, name=PolicyName.LLM_FIRST).route(TEXT)
    assert (decision.intent, decision.decided_by) == (Intent.QUERY, "llm")
    broken = ScriptedLlm({TEXT: TimeoutError("slow")})
    decision = make_router(broken, clf, name=PolicyName.LLM_FIRST).route(TEXT)
    assert (decision.intent, decision.decided_by) == (Intent.NOTE, "classifier")


def test_tie_break_asks_the_llm_only_between_the_two_best() -> None:
    tied = classifier({Intent.NOTE: 0.45, Intent.REMINDER: 0.40, Intent.QUERY: 0.15})
    # The LLM prefers query, which is not one of the two: its say is only note vs reminder.
    llm = ScriptedLlm(
        {
            TEXT: Route(
                Intent.QUERY,
                0.6,
                alternatives=((Intent.QUERY, 0.6), (Intent.REMINDER, 0.3), (Intent.NOTE, 0.1)),
            )
        }
    )
    decision = make_router(llm, tied, name=PolicyName.TIE_BREAK).route(TEXT)
    assert llm.calls == [TEXT]
    assert decision.intent == Intent.REMINDER
    assert decision.decided_by == "classifier+llm tie-break"
    # The pair keeps its mass (0.85), split 3:1 as the LLM weighed the two.
    assert decision.confidence == pytest.approx(0.85 * 0.75)


def test_tie_break_leaves_a_clear_classifier_alone() -> None:
    clear = classifier({Intent.NOTE: 0.8, Intent.REMINDER: 0.1})
    llm = ScriptedLlm({TEXT: Route(Intent.REMINDER, 0.99)})
    decision = make_router(llm, clear, name=PolicyName.TIE_BREAK).route(TEXT)
    assert llm.calls == [] and decision.intent == Intent.NOTE


def test_tie_break_shows_the_llm_the_nearest_examples() -> None:
    class Near(ScriptedClassifier):
        def examples_near(self, text: str, labels: list[str], k: int) -> list[tuple[str, str]]:
            return [("jot down buy eggs", "note"), ("ping me at six", "reminder")][:k]

    contexts: list[str] = []

    class Recording(ScriptedLlm):
        def route(self, utterance: str, *, context: str = "") -> Route:
            contexts.append(context)
            return super().route(utterance, context=context)

    tied = Classified(Intent.NOTE, 0.45, {Intent.NOTE: 0.45, Intent.REMINDER: 0.4})
    llm = Recording({TEXT: Route(Intent.NOTE, 0.9)})
    make_router(llm, Near({TEXT: tied}, LOW), name=PolicyName.TIE_BREAK).route(TEXT)
    (context,) = contexts
    assert '"jot down buy eggs" is note' in context and '"ping me at six" is reminder' in context


@pytest.mark.parametrize("label", ["unsupported", "fragment"])
@pytest.mark.parametrize("policy", [PolicyName.CLASSIFIER, PolicyName.TIE_BREAK, PolicyName.VOTE])
def test_an_out_of_scope_label_declines_and_writes_nothing(label: str, policy: PolicyName) -> None:
    clf = classifier({Intent.NOTE: 0.2, Intent.ACT: 0.15}, {label: 0.6})
    llm = ScriptedLlm({TEXT: Route(Intent.ACT, 0.3, fn="lock_screen")})
    decision = make_router(llm, clf, name=policy, classifier_confident=0.5).route(TEXT)
    assert decision.stage == Stage.GATED and decision.clarify is not None
    assert decision.clarify.kind == "route" and decision.clarify.question == UNSUPPORTED_QUESTION
    assert not decision.slots.has_fn and not decision.slots.has_time


def test_an_out_of_scope_tie_is_never_handed_to_the_llm() -> None:
    clf = classifier({Intent.ACT: 0.4}, {"unsupported": 0.45})
    llm = ScriptedLlm({TEXT: Route(Intent.ACT, 0.99, fn="lock_screen")})
    decision = make_router(llm, clf, name=PolicyName.TIE_BREAK).route(TEXT)
    assert llm.calls == [] and decision.clarify is not None


def test_auto_takes_the_measured_policy_for_the_model() -> None:
    for model, measured in MEASURED_POLICY.items():
        assert resolve_policy("auto", model) is measured
    assert resolve_policy("auto", "/somewhere/unmeasured.gguf") is PolicyName.CLASSIFIER
    assert resolve_policy("llm-first", "anything") is PolicyName.LLM_FIRST


def test_the_config_names_the_policy(tmp_path) -> None:
    settings = parse_settings("[router]\npolicy = \"tie-break\"\ntie_margin = 0.2\n")
    router = build_router(settings, clock=lambda: NOW, use_llm=False, use_classifier=False)
    assert router.policy.name is PolicyName.TIE_BREAK and router.policy.tie_margin == 0.2
    assert not router.policy.needs_llm(None)  # no LLM built: nothing to ask


def test_a_policy_outside_the_list_is_a_config_error() -> None:
    from mavend.errors import ConfigError

    with pytest.raises(ConfigError, match=r"router\.policy"):
        parse_settings('[router]\npolicy = "coin-flip"\n')


def test_default_policy_object_is_the_classifier() -> None:
    assert RoutePolicy().name is PolicyName.CLASSIFIER
