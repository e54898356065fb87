"""Computation checked by hand on small series: exact GPU-hours, thresholds at their edges."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gpuplane.k8s.cluster import ClusterState
from gpuplane.sources.cluster import load_cluster_state
from gpuplane.usage.engine import UsageOptions, run_usage
from gpuplane.usage.files import load_metrics_files
from gpuplane.usage.metrics import (
    Grid,
    SeriesSet,
    UsageInputError,
    choose_step,
    device_key,
    parse_duration,
    promql,
    workload_pod,
)

STEP = 60


def one_gpu(
    activity: list[float], *, fb: float | None = 1000.0, labels: dict[str, str] | None = None
) -> SeriesSet:
    grid = Grid(1_773_000_060, STEP, len(activity))
    s = SeriesSet(grid, source="test")
    base = labels or {"gpu": "0", "Hostname": "node-a", "pod": "p-0", "namespace": "ns", "container": "c"}
    s.add("engine", base, np.array(activity, dtype=float))
    if fb is not None:
        s.add("fb_used", base, np.full(len(activity), fb))
    return s


def test_gpu_hours_exact() -> None:
    # 120 one-minute points: 60 idle, 60 at 50 % -> 2 GPU-h allocated, 1 active, 1 idle, 1 h stretch.
    result = run_usage(one_gpu([0.0] * 60 + [0.5] * 60))
    (w,) = result.workloads
    assert (w.allocated_gpu_hours, w.active_gpu_hours, w.idle_gpu_hours) == (2.0, 1.0, 1.0)
    assert w.longest_idle_hours == 1.0
    assert w.activity_mean == 0.25
    assert result.workloads[0].devices.owner.label() == "Pod ns/p-0"


def test_missing_points_are_not_allocated() -> None:
    activity = [0.5] * 30 + [float("nan")] * 30 + [0.5] * 30
    (w,) = run_usage(one_gpu(activity)).workloads
    assert w.allocated_gpu_hours == 1.0  # 60 points with data
    assert w.observed_hours == 1.0


@pytest.mark.parametrize(("value", "active"), [(0.05, True), (0.0499, False)])
def test_active_threshold_edge(value: float, active: bool) -> None:
    (w,) = run_usage(one_gpu([value] * 60)).workloads
    assert w.active_gpu_hours == (1.0 if active else 0.0)


def test_active_threshold_option() -> None:
    (w,) = run_usage(one_gpu([0.08] * 60), options=UsageOptions(active_threshold=0.10)).workloads
    assert w.active_gpu_hours == 0.0


@pytest.mark.parametrize(("idle_points", "fires"), [(240, True), (239, False)])
def test_idle_hours_edge(idle_points: int, fires: bool) -> None:
    # --idle-hours 4: a stretch of exactly 4 h (240 one-minute points) is enough, 239 are not.
    activity = [0.5] * 10 + [0.0] * idle_points + [0.5] * 10
    rules = [f.rule for f in run_usage(one_gpu(activity)).findings]
    assert ("gpu-allocated-idle" in rules) is fires


def test_idle_saving_of_a_job_is_the_stretch() -> None:
    activity = [0.5] * 60 + [0.0] * 300 + [0.5] * 60
    found = next(f for f in run_usage(one_gpu(activity)).findings if f.rule == "gpu-allocated-idle")
    assert found.saving.gpu_hours == 5.0
    assert found.change["kind"] == "release-idle-gpus"
    assert found.saving.price is None  # no cluster: no instance type, no price


def test_p95_interpolates_like_quantile_over_time() -> None:
    # 101 values 0.00 .. 1.00: phi x (N - 1) = 95 -> exactly 0.95.
    (w,) = run_usage(one_gpu([i / 100 for i in range(101)])).workloads
    assert w.activity_p95 == pytest.approx(0.95)


def test_choose_step() -> None:
    assert choose_step(parse_duration("7d")) == 60  # 10,080 points
    assert choose_step(parse_duration("8d")) == 120  # 11,520 one-minute points would be refused
    assert choose_step(parse_duration("30d")) == 300
    assert choose_step(parse_duration("365d")) == 3600
    assert parse_duration("1h30m") == 5400
    with pytest.raises(UsageInputError, match="is not a duration"):
        parse_duration("7 days")


def test_grid_is_aligned_on_the_step() -> None:
    grid = Grid.for_window(1_773_000_059.9, 3600, 60)
    assert (grid.start, grid.end, grid.n) == (1_772_996_460, 1_773_000_000, 60)


def test_queries() -> None:
    assert promql("engine", 60) == "avg_over_time(DCGM_FI_PROF_GR_ENGINE_ACTIVE[1m])"
    assert (
        promql("fb_used", 300, 'cluster="prod"') == 'max_over_time(DCGM_FI_DEV_FB_USED{cluster="prod"}[5m])'
    )
    assert promql("iowait", 60) == (
        'avg by (instance, node, nodename) (rate(node_cpu_seconds_total{mode="iowait"}[2m]))'
    )


def test_pod_labels_in_every_spelling() -> None:
    # honor_labels false: the target's pod/namespace are the exporter's; exported_* is the workload.
    scraped = {
        "pod": "nvidia-dcgm-exporter-x1",
        "namespace": "gpu-operator",
        "exported_pod": "p",
        "exported_namespace": "ns",
    }
    assert workload_pod(scraped)[:2] == ("ns", "p")
    # a free GPU seen through a target label only: not a workload
    assert workload_pod(
        {"pod": "nvidia-dcgm-exporter-x1", "namespace": "gpu-operator", "container": "nvidia-dcgm-exporter"}
    ) == ("", "", "")
    assert workload_pod({"pod_name": "p", "pod_namespace": "ns", "container_name": "c"}) == ("ns", "p", "c")
    assert device_key({"gpu": "3", "hostname": "node-b", "GPU_I_ID": "2"}) == ("node-b", "3", "2", "")


def test_util_fallback_and_note() -> None:
    grid = Grid(1_773_000_060, STEP, 60)
    s = SeriesSet(grid)
    s.add("util", {"gpu": "0", "pod": "p", "namespace": "ns"}, np.full(60, 0.4))
    result = run_usage(s)
    assert result.activity_kind == "util"
    assert result.workloads[0].activity_mean == pytest.approx(0.4)
    assert any("DCGM_FI_DEV_GPU_UTIL" in n for n in result.notes)


def test_no_activity_is_an_input_error() -> None:
    s = SeriesSet(Grid(0, 60, 1))
    s.add("fb_used", {"gpu": "0"}, np.ones(1))
    with pytest.raises(UsageInputError, match="no GPU activity series"):
        run_usage(s)


@pytest.fixture(scope="module")
def state() -> ClusterState:
    src = Path(__file__).resolve().parents[1] / "fixtures" / "usage" / "cluster.yaml"
    loaded, errors = load_cluster_state(str(src))
    assert errors == []
    return loaded


MIG_LABELS = {
    "gpu": "0",
    "Hostname": "node-mig",
    "GPU_I_PROFILE": "3g.20gb",
    "GPU_I_ID": "1",
    "pod": "embed-7f9c8d6b4-q8w2e",
    "namespace": "serving",
}


@pytest.mark.parametrize(
    ("peak_mib", "to", "saved"),
    [
        (4654.0, "1g.5gb", 4.5),  # 4654 x 1.1 = 5119.4 MiB = 4.9994 GB <= 5 GB: 1 of 4 memory slices
        (4655.0, "1g.10gb", 3.0),  # 5.0004 GB no longer fits 1g.5gb: 1g.10gb, 2 of 4 slices
    ],
)
def test_memory_oversized_edge(state: ClusterState, peak_mib: float, to: str, saved: float) -> None:
    series = one_gpu([0.15] * 720, fb=peak_mib, labels=MIG_LABELS)
    found = next(f for f in run_usage(series, state).findings if f.rule == "gpu-memory-oversized")
    assert (found.change["to"], found.saving.gpu_hours) == (to, saved)  # 12 h x 0.5 GPU = 6 GPU-h


def test_memory_oversized_needs_the_compute_too(state: ClusterState) -> None:
    # p95 0.40 of a 3g.20gb = 1.2 compute slices: 1g profiles (1 slice) do not fit, 2g.10gb does.
    series = one_gpu([0.40] * 720, fb=3000, labels=MIG_LABELS)
    found = next(f for f in run_usage(series, state).findings if f.rule == "gpu-memory-oversized")
    assert found.change["to"] == "2g.10gb"


def _starved(state: ClusterState, activity: float, iowait: float, active_share: float = 1.0) -> list[str]:
    n = 120
    busy = int(n * active_share)
    labels = {"gpu": "3", "Hostname": "node-a", "pod": "train-llm-0", "namespace": "team-b"}
    series = one_gpu([activity] * busy + [0.0] * (n - busy), fb=38000, labels=labels)
    series.add("iowait", {"instance": "node-a:9100"}, np.full(n, iowait))
    return [f.rule for f in run_usage(series, state).findings]


def test_data_starved_edges(state: ClusterState) -> None:
    assert "gpu-data-starved" in _starved(state, 0.49, 0.10)
    assert "gpu-data-starved" not in _starved(state, 0.50, 0.10)  # activity not below 50 %
    assert "gpu-data-starved" not in _starved(state, 0.30, 0.0999)  # iowait under 10 %
    assert "gpu-data-starved" not in _starved(state, 0.30, 0.30, active_share=0.45)  # mostly stopped


def test_openmetrics_buckets_are_left_open(tmp_path: Path) -> None:
    # Samples at 60 s (on the boundary) and 90 s: the point at 60 covers (0, 60], the one at 120 (60, 120].
    path = tmp_path / "m.om"
    path.write_text(
        "# TYPE DCGM_FI_PROF_GR_ENGINE_ACTIVE gauge\n"
        'DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu="0",pod="p",namespace="n"} 0.2 30\n'
        'DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu="0",pod="p",namespace="n"} 0.4 60\n'
        'DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu="0",pod="p",namespace="n"} 0.8 90\n'
        "# EOF\n"
    )
    s = load_metrics_files([str(path)], step=60)
    assert (s.grid.start, s.grid.n) == (60, 2)
    assert s.series["engine"][0].values.tolist() == pytest.approx([0.3, 0.8])


def test_text_exposition_and_gpu_util_scale(tmp_path: Path) -> None:
    path = tmp_path / "m.prom"
    path.write_text(
        '# TYPE DCGM_FI_DEV_GPU_UTIL gauge\nDCGM_FI_DEV_GPU_UTIL{gpu="0",pod="p",namespace="n"} 37 60000\n'
    )
    s = load_metrics_files([str(path)], step=60)
    assert s.series["util"][0].values.tolist() == [0.37]  # % -> ratio; text timestamps are ms


def test_samples_without_timestamps_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "m.prom"
    path.write_text('DCGM_FI_DEV_GPU_UTIL{gpu="0"} 37\n')
    with pytest.raises(UsageInputError, match="has no timestamp"):
        load_metrics_files([str(path)])


def test_pool_right_size_with_advise_capacity(tmp_path: Path) -> None:
    # Two p4d.24xlarge (8 x A100-40GB) in one pool; at most 7 GPUs held at once, the largest pod
    # holds 4: advise capacity says one p4d.24xlarge, $21.957642 x 730 h a month instead of two.
    import yaml

    src = Path(__file__).resolve().parents[1] / "fixtures" / "usage" / "cluster.yaml"
    items = yaml.safe_load(src.read_text())["items"]
    node_a = next(i for i in items if i["kind"] == "Node" and i["metadata"]["name"] == "node-a")
    node_b = yaml.safe_load(yaml.safe_dump(node_a))
    node_b["metadata"]["name"] = "node-b"
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [node_a, node_b]}))
    state, errors = load_cluster_state(str(path))
    assert errors == []
    grid = Grid(1_773_000_060, STEP, 60)
    series = SeriesSet(grid)
    for gpu in range(7):
        node, pod = ("node-a", "p-big") if gpu < 4 else ("node-b", f"p-{gpu}")
        series.add(
            "engine", {"gpu": str(gpu), "Hostname": node, "pod": pod, "namespace": "ns"}, np.full(60, 0.9)
        )
    (pool,) = run_usage(series, state).pools
    assert (pool.key, pool.peak_allocated_gpus) == ("a100", 7.0)
    assert pool.right_size == {
        "nodes_now": 2,
        "instance_type_now": "p4d.24xlarge",
        "monthly_usd_now": 32058.16,
        "gpus_needed_at_peak": 7,
        "largest_pod_gpus": 4,
        "nodes_needed": 1,
        "instance_type": "p4d.24xlarge",
        "monthly_usd_needed": 16029.08,
        "estimate": True,
        "advise": "gpuplane advise capacity --demand A100-40GB=7 --provider aws",
    }


@pytest.mark.parametrize(("gpus", "fires"), [(1, True), (2, False)])
def test_underused_only_for_single_gpu_pods(state: ClusterState, gpus: int, fires: bool) -> None:
    # 10 % activity and 2,000 MiB: one GPU fits a share; a pod spread over two GPUs (one NCCL job)
    # is not split onto slices.
    series = SeriesSet(Grid(1_773_000_060, STEP, 120))
    for gpu in range(gpus):
        labels = {
            "gpu": str(gpu),
            "Hostname": "node-a",
            "pod": "chat-6d8f7c9b5-x2x9k",
            "namespace": "serving",
        }
        series.add("engine", labels, np.full(120, 0.10))
        series.add("fb_used", labels, np.full(120, 2000.0))
    rules = [f.rule for f in run_usage(series, state).findings]
    assert ("gpu-underused" in rules) is fires


def test_heatmap_counts_each_device_once_per_hour() -> None:
    # GPU 0: free (no pod labels) for 30 minutes, then held by a pod at 0.8; GPU 1 free at 0.0.
    # The hour's cell is the mean over both devices: (30 x 0 + 30 x 0.8 + 60 x 0) / 120 = 0.2.
    grid = Grid(1_773_000_060, STEP, 60)
    s = SeriesSet(grid)
    nan30 = [float("nan")] * 30
    s.add("engine", {"gpu": "0", "Hostname": "n1"}, np.array([0.0] * 30 + nan30))
    s.add(
        "engine", {"gpu": "0", "Hostname": "n1", "pod": "p", "namespace": "ns"}, np.array(nan30 + [0.8] * 30)
    )
    s.add("engine", {"gpu": "1", "Hostname": "n1"}, np.zeros(60))
    heat = run_usage(s, options=UsageOptions(heatmap=True)).heat
    assert heat is not None
    assert (heat.nodes, heat.bucket_s, heat.values.tolist()) == (["n1"], 3600, [[pytest.approx(0.2)]])


def test_power_energy_and_tensor() -> None:
    # 120 one-minute points at 300 W: 2 h x 300 W = 0.6 kWh; tensor pipe 0.25 on average.
    s = one_gpu([0.5] * 120)
    labels = s.series["engine"][0].labels
    s.add("power", labels, np.full(120, 300.0))
    s.add("tensor", labels, np.array([0.0, 0.5] * 60))
    (w,) = run_usage(s).workloads
    assert (w.power_mean_w, w.energy_kwh, w.tensor_mean) == (300.0, pytest.approx(0.6), 0.25)
