"""Kubernetes-aware tokenisation, BM25 ranking and the on-disk index cache."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gpuplane.knowledge import search as search_mod
from gpuplane.knowledge.search import Document, Index, index, search, tokenize


@pytest.fixture(autouse=True)
def _no_user_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never write the index cache into the user's home directory."""
    monkeypatch.setenv("GPUPLANE_CACHE_DIR", "off")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "requests.nvidia.com/gpu",
            [
                "requests.nvidia.com/gpu",
                "requests.nvidia.com",
                "gpu",
                "nvidia.com/gpu",
                "nvidia.com",
                "request",
                "nvidia",
            ],
        ),
        ("minAvailable", ["minavailable", "min", "available"]),
        (
            "nvidia.com/mig-1g.10gb",
            ["nvidia.com/mig-1g.10gb", "nvidia.com", "mig-1g.10gb", "1g.10gb", "10gb", "nvidia", "mig", "1g"],
        ),
        ("DCGM_FI_DEV_GPU_UTIL", ["dcgm_fi_dev_gpu_util", "dcgm", "fi", "dev", "gpu", "util"]),
        (
            "nvidia.com/gpu.product",
            ["nvidia.com/gpu.product", "nvidia.com", "gpu.product", "product", "nvidia", "gpu"],
        ),
        ("ReadWriteMany", ["readwritemany", "read", "write", "many"]),
        ("GPUs and policies for the nodes", ["gpu", "policy", "node"]),
        ("What is the default /dev/shm size?", ["default", "dev/shm", "dev", "shm", "size"]),
        ("", []),
    ],
)
def test_tokenize(text: str, expected: list[str]) -> None:
    assert tokenize(text) == expected


def test_stemming_keeps_exact_names() -> None:
    assert tokenize("status classes") == ["status", "class"]
    assert tokenize("kubernetes k8s the of") == []


def _tiny_index() -> Index:
    docs = [
        Document(
            id="quota",
            title="GPU quota",
            body="Use requests.nvidia.com/gpu in a ResourceQuota.",
            kind="section",
        ),
        Document(
            id="shm",
            title="Shared memory",
            body="Mount an emptyDir at /dev/shm for the DataLoader.",
            kind="section",
        ),
        Document(id="rule:x", title="x: gang", body="minAvailable must not exceed replicas.", kind="rule"),
    ]
    fields = [(d.title, "", d.body) for d in docs]
    return Index(docs, fields)


def test_bm25_ranks_the_matching_document_first() -> None:
    idx = _tiny_index()
    assert idx.search("nvidia.com/gpu quota")[0].document.id == "quota"
    assert idx.search("DataLoader shm")[0].document.id == "shm"
    assert [h.document.id for h in idx.search("min available")] == ["rule:x"]
    assert idx.search("completely unrelated words") == []


def test_search_can_exclude_rule_docs() -> None:
    idx = _tiny_index()
    assert idx.search("minAvailable", kinds=("section",)) == []


def test_title_boost() -> None:
    docs = [
        Document(id="a", title="Karpenter", body="nodes " * 20, kind="section"),
        Document(id="b", title="Nodes", body="karpenter " + "nodes " * 19, kind="section"),
    ]
    idx = Index(docs, [(d.title, "", d.body) for d in docs])
    assert idx.search("karpenter")[0].document.id == "a"


def test_real_index_finds_sections_by_exact_k8s_names() -> None:
    cases = {
        "requests.nvidia.com/gpu ResourceQuota": "gpu-resourcequota",
        "failRequestsGreaterThanOne": "shared-gpu-requests",
        "karpenter.sh/do-not-disrupt": "karpenter-disruption",
        "nvidia.com/device-plugin.config": "device-plugin-per-node-config",
        "DCGM_FI_DEV_GPU_UTIL": "dcgm-exporter",
        "scheduling.x-k8s.io/pod-group": "coscheduling-plugin",
        "WaitForFirstConsumer": "volume-binding-mode",
    }
    for query, expected in cases.items():
        ids = [h.document.id for h in search(query, limit=3, include_rules=False)]
        assert expected in ids, (query, ids)


def test_references_are_not_indexed() -> None:
    # Upstream file names cited only in References lists are not search terms.
    idx = index(False)
    assert "default_preemption.go" not in idx.term_weights("default_preemption.go")
    assert idx.term_weights("ResourceQuota")  # while prose is


def test_rule_docs_are_indexed_when_lint_exists() -> None:
    pytest.importorskip("gpuplane.rule_catalog")
    kinds = {d.kind for d in index().documents}
    assert kinds == {"section", "rule"}
    assert any(d.id == "rule:quota-gpu-invalid-key" for d in index().documents)


def test_disk_cache_round_trip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUPLANE_CACHE_DIR", str(tmp_path))
    search_mod._index.cache_clear()
    try:
        built = index(False)
        files = list(tmp_path.glob("kb-index-*.msgpack"))
        assert len(files) == 1
        search_mod._index.cache_clear()
        restored = index(False)
        assert restored is not built
        assert [d.id for d in restored.documents] == [d.id for d in built.documents]
        assert restored.postings == {t: [(i, w) for i, w in p] for t, p in built.postings.items()}
        query = "time-slicing replicas failRequestsGreaterThanOne"
        assert [(h.document.id, round(h.score, 6)) for h in restored.search(query)] == [
            (h.document.id, round(h.score, 6)) for h in built.search(query)
        ]
        assert restored.documents[0].section is not None
        assert restored.documents[0].section.topics == built.documents[0].section.topics
    finally:
        search_mod._index.cache_clear()


def test_corrupt_cache_is_rebuilt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUPLANE_CACHE_DIR", str(tmp_path))
    key = search_mod._cache_key(None)
    assert key is not None
    Path(search_mod._cache_path(key)).write_bytes(b"\x00not msgpack")
    search_mod._index.cache_clear()
    try:
        assert len(index(False).documents) >= 80
    finally:
        search_mod._index.cache_clear()


def test_cache_can_be_switched_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUPLANE_CACHE_DIR", "off")
    assert search_mod.cache_dir() is None
    assert search_mod._cache_key(None) is None


def test_cache_dir_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GPUPLANE_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", "/x/cache")
    assert search_mod.cache_dir() == os.path.join("/x/cache", "gpuplane")


def test_acronyms_expand_but_stay() -> None:
    from gpuplane.knowledge.search import expand_acronyms

    assert expand_acronyms("Is DRA stable?") == "Is DRA (dynamic resource allocation resourceclaim) stable?"
    assert expand_acronyms("pdb and hpa") == (
        "pdb (pod disruption budget poddisruptionbudget) and hpa (horizontal pod autoscaler)"
    )
    assert expand_acronyms("no acronym, not even in words like camera or hdra") == (
        "no acronym, not even in words like camera or hdra"
    )


def test_index_without_a_rule_catalog_holds_sections_only() -> None:
    """Knowledge imports no rule catalog (it sits above knowledge): with none installed the index
    is the sections alone, and LLM mode's explain_rule says why it has no page."""
    from gpuplane.knowledge import llm, rule_source

    installed = rule_source.current()
    rule_source.use(None)
    try:
        assert {d.kind for d in index().documents} == {"section"}
        assert llm.run_tool("explain_rule", {"rule_id": "quota-gpu-invalid-key"}) == (
            "error: lint rules unavailable (no rule catalog installed)"
        )
    finally:
        rule_source.use(installed)


def test_rule_catalog_cache_inputs_cover_every_rule_package() -> None:
    """The on-disk cache key hashes every module and docs page of lint's and diagnose's rules."""
    from gpuplane.rule_catalog import RULE_SOURCE

    files = RULE_SOURCE.input_files()
    assert any(f.endswith("/lint/rules/__init__.py") for f in files)
    assert any("/diagnose/rules/" in f for f in files)
    assert all(os.path.isfile(f) for f in files)
