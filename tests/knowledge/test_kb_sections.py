"""The knowledge base as data: front matter, references, coverage of the mission topics,
and a docs link for every lint rule."""

from __future__ import annotations

import os
import re
from collections import Counter
from pathlib import Path

import pytest

from gpuplane import knowledge
from gpuplane.knowledge import KnowledgeError, parse_section, section, section_for_rule, sections

# The mission topics of the issue, as the `topics:` tags sections use.
MISSION_TOPICS = {
    "gpu-operator": "GPU Operator install and config (pre-installed drivers, cloud specifics)",
    "device-plugin": "device plugin",
    "exposing-gpus": "exposing GPUs to pods",
    "gpu-sharing": "time-slicing vs MIG vs MPS vs DRA",
    "unschedulable": "misconfigurations that make GPU jobs unschedulable",
    "multi-tenancy": "interference in multi-tenant clusters",
    "node-affinity": "node affinity for GPU pools",
    "topology-spread": "topology spread for distributed training",
    "training-jobs": "Job / Indexed Job / MPI Operator / PyTorchJob / TrainJob / JobSet / Volcano",
    "gang-scheduling": "why the default scheduler fails multi-node jobs; Volcano, coscheduling",
    "kueue": "Kueue",
    "gpu-quota": "namespace GPU quotas",
    "priority": "PriorityClasses for production vs research",
    "cluster-autoscaler": "Cluster Autoscaler for GPU node groups and cold-start latency",
    "karpenter": "Karpenter",
    "shared-storage": "RWX volumes for shared datasets",
    "parallel-filesystems": "Lustre / GPFS CSI drivers",
    "ephemeral-storage": "ephemeral storage for large model artifacts",
    "dev-shm": "/dev/shm",
    "inference-serving": "inference serving and autoscaling on GPU metrics",
    "observability": "observability with DCGM",
    "fabric-networking": "fabric networking for distributed training (EFA, InfiniBand/RoCE, GPUDirect, NVLink)",
    "cloud-providers": "cloud specifics (GKE, EKS, AKS)",
}

# Named sub-topics of the issue that must each have their own section.
REQUIRED_SECTIONS = {
    "pre-installed drivers": "gpu-operator-preinstalled-drivers",
    "cloud specifics": "gpu-operator-cloud-providers",
    "time-slicing": "gpu-time-slicing",
    "MIG": "mig-strategies",
    "MPS": "gpu-mps",
    "DRA": "dra-overview",
    "Indexed Job": "indexed-job-training",
    "MPI Operator": "mpijob",
    "PyTorchJob": "pytorchjob",
    "TrainJob": "trainjob-trainer-v2",
    "JobSet": "jobset",
    "Volcano Job": "volcano-job",
    "Volcano scheduler": "volcano-scheduler",
    "coscheduling plugin": "coscheduling-plugin",
    "why the default scheduler fails": "gang-scheduling-why",
    "cold-start latency": "gpu-cold-start",
    "Lustre": "fsx-lustre-csi",
    "GPFS": "parallel-filesystems-csi",
    "/dev/shm": "dev-shm-sizing",
    "autoscaling on GPU metrics": "inference-autoscaling-metrics",
    "DCGM": "dcgm-exporter",
}

# Every rule id of spec/rules.md (v1); the lint docs pages link section_for_rule(id).
_RULE_TEXT = """
gpu-request-without-limit gpu-request-limit-mismatch gpu-fractional-quantity gpu-unknown-resource-name
gpu-init-container-hoards gpu-request-exceeds-node gpu-visible-devices-env gpu-privileged-access
gpu-unrequested-cuda-image gpu-taint-not-tolerated gpu-selector-matches-no-node gpu-type-unpinned
cpu-pod-on-gpu-nodes training-spread-across-zones serving-replicas-not-spread device-plugin-config-invalid
device-plugin-config-unreferenced shared-gpu-request-gt1 timeslicing-multi-tenant mig-profile-unknown
mig-strategy-mismatch mig-config-invalid mig-multiple-devices-per-container gang-scheduling-missing
gang-min-exceeds-replicas gang-min-below-replicas scheduler-not-installed gang-queue-missing
indexed-job-no-stable-dns indexed-job-partial-parallelism pytorchjob-master-replicas mpijob-launcher-gpu
shm-too-small shm-unbounded training-no-failure-policy quota-gpu-invalid-key namespace-without-gpu-quota
gpu-workload-without-priority system-priority-misuse batch-priority-preempts-serving rwo-volume-shared
storage-immediate-binding model-cache-ephemeral-unbounded shared-dataset-writable inference-no-startup-probe
hpa-cpu-for-gpu-serving gpu-rollout-surge-deadlock image-pull-always-large karpenter-gpu-nodepool-untainted
karpenter-consolidation-disrupts-training karpenter-gpu-limit-missing gpu-node-root-volume-small
clusterpolicy-invalid dcgm-exporter-disabled gpu-node-not-advertising gpu-unhealthy-devices
gpu-operator-pods-failing mig-config-failed gang-partially-running gpu-fragmentation pending-gpu-pod
"""
RULE_IDS = _RULE_TEXT.split()

ALL = sections()


def test_at_least_80_sections() -> None:
    assert len(ALL) >= 80


def test_mission_topics_have_two_sections_each() -> None:
    counts = Counter(t for s in ALL for t in s.topics)
    thin = {t: counts[t] for t in MISSION_TOPICS if counts[t] < 2}
    assert not thin, f"mission topics with fewer than 2 sections: {thin}"


@pytest.mark.parametrize(("subtopic", "section_id"), sorted(REQUIRED_SECTIONS.items()))
def test_named_subtopics_have_a_section(subtopic: str, section_id: str) -> None:
    assert section(section_id) is not None, f"no section for {subtopic}"


@pytest.mark.parametrize("sec", ALL, ids=[s.id for s in ALL])
def test_section_front_matter_and_shape(sec: knowledge.Section) -> None:
    assert Path(sec.path).name == f"{sec.id}.md"
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", sec.id)
    assert sec.topics and set(sec.topics) <= set(MISSION_TOPICS), sec.topics
    assert len(sec.keywords) >= 3
    from gpuplane.rule_catalog import all_rules

    known = set(RULE_IDS) | {meta.id for meta in all_rules()}  # the catalog plus rules added beyond it
    assert set(sec.rules) <= known, f"unknown rule ids {set(sec.rules) - known}"
    first = sec.body.splitlines()[0]
    assert first == f"# {sec.title}", "body must start with '# <title>'"
    words = len(sec.body.split())
    assert 180 <= words <= 800, f"{words} words"
    for marker in ("TODO", "FIXME", "XXX"):
        assert marker not in sec.body


@pytest.mark.parametrize("sec", ALL, ids=[s.id for s in ALL])
def test_section_has_references(sec: knowledge.Section) -> None:
    assert "\n## References\n" in sec.body
    assert sec.body.rstrip().splitlines()[-1].startswith("- "), "References must be the last block"
    assert len(sec.references()) >= 1


def test_every_spec_rule_has_a_section() -> None:
    missing = [r for r in RULE_IDS if section_for_rule(r) is None]
    assert not missing


def test_rule_list_matches_spec(shared_dir: Path) -> None:
    spec = (shared_dir / "spec" / "rules.md").read_text(encoding="utf-8")
    ids = {m for m in re.findall(r"^\| ([a-z0-9-]+) \|", spec, re.M) if m != "id"}
    assert ids == set(RULE_IDS)


def test_every_registered_rule_has_a_section() -> None:
    registry = pytest.importorskip("gpuplane.rule_catalog")
    missing = [m.id for m in registry.all_rules() if section_for_rule(m.id) is None]
    assert not missing


def test_each_rule_is_claimed_once() -> None:
    claims = Counter(r for s in ALL for r in s.rules)
    assert [r for r, n in claims.items() if n > 1] == []


def test_section_for_rule_examples() -> None:
    assert section_for_rule("quota-gpu-invalid-key").id == "gpu-resourcequota"
    assert section_for_rule("shm-too-small").id == "dev-shm-sizing"
    assert section_for_rule("no-such-rule") is None
    assert knowledge.sections_for_rule("shm-unbounded")[0].id == "dev-shm-sizing"


def test_parse_section_errors_name_the_file() -> None:
    with pytest.raises(KnowledgeError, match=r"x\.md: section must start"):
        parse_section("# no front matter\n", "x.md")
    with pytest.raises(KnowledgeError, match=r"x\.md: front matter is not closed"):
        parse_section("---\nid: a\n", "x.md")
    with pytest.raises(KnowledgeError, match=r"x\.md: front matter lacks topics, keywords"):
        parse_section("---\nid: a\ntitle: A\n---\n# A\n", "x.md")
    with pytest.raises(KnowledgeError, match=r"x\.md: front matter is not valid YAML"):
        parse_section("---\nid: [a\n---\n# A\n", "x.md")
    with pytest.raises(KnowledgeError, match=r"'keywords' must be a list of strings"):
        parse_section("---\nid: a\ntitle: A\ntopics: [t]\nkeywords: k\n---\n# A\n", "x.md")


def test_parse_section_fields() -> None:
    sec = parse_section(
        "---\nid: a\ntitle: A title\ntopics: [dev-shm]\nkeywords: [x, y]\nrules: [shm-too-small]\n---\n"
        "# A title\n\nBody.\n\n## References\n\n- one\n- two\n",
        "a.md",
    )
    assert (sec.id, sec.title, sec.topics, sec.keywords, sec.rules) == (
        "a",
        "A title",
        ("dev-shm",),
        ("x", "y"),
        ("shm-too-small",),
    )
    assert sec.body.startswith("# A title")
    assert sec.references() == ["one", "two"]


def test_sections_dir_only_holds_sections() -> None:
    names = os.listdir(knowledge.SECTIONS_DIR)
    assert all(n.endswith(".md") for n in names)
    assert len(names) == len(ALL)


# An upstream source: a URL, or a repository named owner/name followed by what in it (a path in
# backticks, README, docs, an issue or PR, a CHANGELOG, a KEP ...).
_UPSTREAM = re.compile(
    r"https://\S+|\b[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9][A-Za-z0-9._-]+ "
    r"(?:`|README|issues? |PRs? |docs|CHANGELOG|KEP|repository|release|\(|and |site/)"
)


def cites_upstream(sec: knowledge.Section) -> bool:
    return any(_UPSTREAM.search(ref) for ref in sec.references())


@pytest.mark.parametrize("sec", ALL, ids=[s.id for s in ALL])
def test_section_cites_an_upstream_source(sec: knowledge.Section) -> None:
    assert cites_upstream(sec), f"{sec.id}: no reference names an upstream repository file, issue or URL"


def test_upstream_check_rejects_a_section_without_sources() -> None:
    bare = parse_section(
        "---\nid: a\ntitle: A\ntopics: [dev-shm]\nkeywords: [x, y, z]\n---\n# A\n\nBody.\n\n"
        "## References\n\n- my own notes\n- reference/python-stack.md\n",
        "a.md",
    )
    assert not cites_upstream(bare)
    cited = parse_section(
        "---\nid: a\ntitle: A\ntopics: [dev-shm]\nkeywords: [x, y, z]\n---\n# A\n\nBody.\n\n"
        "## References\n\n- kubernetes/kubernetes `pkg/kubelet/cm/devicemanager/manager.go`\n",
        "a.md",
    )
    assert cites_upstream(cited)


def test_every_rule_page_links_its_section() -> None:
    """`gpuplane explain ID` (the docs link of every lint and diagnose finding) names the section
    that explains the rule by its repository path, docs/rules/ links it, and that section lists
    the rule in its front matter."""
    catalog = pytest.importorskip("gpuplane.rule_catalog")
    for meta in catalog.all_rules():
        sec = section_for_rule(meta.id)
        assert sec is not None, meta.id
        assert meta.id in sec.rules
        link = catalog.SECTIONS_LINK.format(sec.id)
        assert f"[{sec.title}]({link})" in catalog.render_page(meta, docs_link=True), meta.id
        assert f"{sec.title}, `{catalog.SECTIONS_PATH.format(sec.id)}`" in catalog.render_page(meta), meta.id
        assert os.path.isfile(os.path.join(knowledge.SECTIONS_DIR, f"{sec.id}.md"))


def test_the_cached_rule_map_answers_as_the_sections(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``rule_section`` (what ``explain`` reads, cached) equals ``section_for_rule``, whether the map
    is built, read back from the cache folder, or rebuilt after a section changed."""
    monkeypatch.setenv("GPUPLANE_CACHE_DIR", str(tmp_path))
    rules = sorted({r for s in sections() for r in s.rules} | set(RULE_IDS) | {"no-such-rule"})
    expected = {r: (s.id, s.title) if (s := section_for_rule(r)) else None for r in rules}
    knowledge._rule_sections.cache_clear()
    assert {r: knowledge.rule_section(r) for r in rules} == expected  # built and stored
    (stored,) = tmp_path.glob("kb-rule-sections-*.json")
    knowledge._rule_sections.cache_clear()
    monkeypatch.setattr(knowledge, "_load", None)  # read back without parsing a section
    assert {r: knowledge.rule_section(r) for r in rules} == expected
    monkeypatch.undo()
    monkeypatch.setenv("GPUPLANE_CACHE_DIR", str(tmp_path))
    doc = stored.read_text(encoding="utf-8").replace('"gpu-request-limit-mismatch": [', '"x": [')
    stored.write_text(doc.replace('"fingerprint": {"', '"fingerprint": {"stale-', 1), encoding="utf-8")
    knowledge._rule_sections.cache_clear()
    assert knowledge.rule_section("gpu-request-limit-mismatch") == expected["gpu-request-limit-mismatch"]
    knowledge._rule_sections.cache_clear()
