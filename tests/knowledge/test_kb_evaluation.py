"""The real-world question set of `gpuplane ask` (bench/ask/questions.yaml) and what it guards:

- the set is large enough, every question cites its public source and the terms a complete
  answer must contain;
- the tuning/evaluation split is the recorded rule (sha256 of the id), so nobody can move a
  question between halves after seeing its score;
- the evaluation half stays at or above the issue's target (85% complete);
- out-of-scope questions (weather, cooking, non-GPU Kubernetes topics) get "no knowledge",
  with the nearest topics instead of a confident section.
"""

from __future__ import annotations

from collections import Counter

import pytest

from gpuplane.knowledge.answer import answer
from gpuplane.knowledge.evaluation import (
    COMPLETE,
    DEFAULT_SET,
    EVALUATION,
    NONE,
    PARTIAL,
    TUNING,
    evaluate,
    format_report,
    grade,
    half_of,
    load,
)

QSET = load()


@pytest.fixture(autouse=True)
def _no_user_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUPLANE_CACHE_DIR", "off")


def _ask(question: str) -> tuple[str, bool]:
    result = answer(question)
    return result.answer, result.known


def test_set_size_and_sources() -> None:
    qs = QSET.questions
    assert len(qs) >= 80
    assert len({q.id for q in qs}) == len(qs)
    assert all(q.source.startswith("https://github.com/") for q in qs)
    assert all(q.must and all(m.strip() for m in q.must) for q in qs)
    topics = Counter(q.topic for q in qs)
    for topic in (
        "fabric",
        "mpi",
        "mig",
        "mps",
        "isolation",
        "gpu-operator",
        "kueue",
        "schedulers",
        "storage",
    ):
        assert topics[topic] >= 4, topic


def test_split_is_the_recorded_rule() -> None:
    for q in QSET.questions:
        assert q.half == half_of(q.id), q.id
    for p in QSET.probes:
        assert p.half == half_of(p.id), p.id
    halves = Counter(q.half for q in QSET.questions)
    assert halves[TUNING] >= 40 and halves[EVALUATION] >= 40


def test_half_of_is_sha256_parity() -> None:
    # sha256("mig-disable") ends in hex 3 (odd), sha256("fabric-efa-socket-fallback") in 6 (even)
    assert half_of("mig-disable") == EVALUATION
    assert half_of("fabric-efa-socket-fallback") == TUNING


def test_grade() -> None:
    assert grade("set `nvidia.com/mig.config=all-disabled`", ("all-disabled", "nvidia.com/MIG.config")) == (
        COMPLETE,
        [],
    )
    assert grade("use all-disabled", ("all-disabled", "reboot")) == (PARTIAL, ["reboot"])
    assert grade("nothing here", ("reboot",)) == (NONE, ["reboot"])


def test_evaluation_half_meets_the_target() -> None:
    report = evaluate(QSET, _ask, (EVALUATION,))
    share = report.share_complete(EVALUATION)
    assert share >= 0.85, format_report(report)


def test_tuning_half_meets_the_target() -> None:
    report = evaluate(QSET, _ask, (TUNING,))
    assert report.share_complete(TUNING) >= 0.85, format_report(report)


@pytest.mark.parametrize("probe", QSET.probes, ids=[p.id for p in QSET.probes])
def test_out_of_scope_probe_gets_no_knowledge(probe: object) -> None:
    result = answer(probe.question)  # type: ignore[attr-defined]
    assert result.known is False
    assert result.sources == []
    assert result.answer.startswith(
        "The knowledge base has no knowledge of that"
    ) or result.answer.startswith("The knowledge base has nothing")


@pytest.mark.parametrize(
    "question",
    [
        "What's the weather in Paris tomorrow?",
        "How long should I cook spaghetti al dente?",
        "How do I configure TLS on an Ingress with cert-manager?",
    ],
)
def test_issue_probes_name_the_nearest_topics(question: str) -> None:
    result = answer(question)
    assert result.known is False
    doc = result.to_json()
    assert doc["sources"] == [] and doc["known"] is False
    if "nearest topics" in result.answer:
        assert result.answer.count("\n- ") >= 1


def test_in_scope_question_is_known_with_scored_sources() -> None:
    result = answer("MPIJob with WaitForWorkersReady and a gang scheduler: no launcher is created")
    assert result.known is True
    assert result.sources[0]["section"] == "mpi-operator-lifecycle"
    assert "runPolicy.schedulingPolicy.minAvailable" in result.answer
    # the direct answer comes first, then the keys, then the why
    assert (
        result.answer.index("The gang deadlock")
        < result.answer.index("**Use:**")
        < result.answer.index("**Why")
    )


def test_fresh_set_loads_and_is_its_own_half() -> None:
    """bench/ask/fresh.yaml: questions written after tuning, scored with --fresh, never tuned on."""
    fresh = load(DEFAULT_SET.parent / "fresh.yaml")
    assert len(fresh.questions) >= 10 and len(fresh.probes) >= 3
    assert {q.half for q in fresh.questions} == {"fresh"}
    assert not {q.id for q in fresh.questions} & {q.id for q in QSET.questions}
