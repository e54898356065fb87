"""One "is scheduler X running" (gpuplane.k8s.schedulers) for lint and why-pending."""

from __future__ import annotations

from typing import Any

from gpuplane.k8s.manifest import Manifest
from gpuplane.k8s.objects import Pod, pod_from_dict
from gpuplane.k8s.schedulers import RunningSchedulers

PROFILE = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: gang\n"


def pod(name: str, namespace: str = "kube-system", phase: str = "Running", **spec: Any) -> Pod:
    return pod_from_dict(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"containers": [{"name": "c", "image": spec.pop("image", "busybox")}], **spec},
            "status": {"phase": phase},
        }
    )


def configmap(namespace: str) -> Manifest:
    return Manifest(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "sched", "namespace": namespace},
            "data": {"config.yaml": PROFILE},
        }
    )


def test_the_default_scheduler_always_runs() -> None:
    assert "default-scheduler" in RunningSchedulers([])
    assert "volcano" not in RunningSchedulers([])


def test_a_running_scheduler_pod_counts_a_finished_one_does_not() -> None:
    assert "volcano" in RunningSchedulers([pod("volcano-scheduler-5d9f")])
    assert "volcano" not in RunningSchedulers([pod("volcano-scheduler-5d9f", phase="Failed")])
    assert "my-sched" in RunningSchedulers([pod("my-sched-0")])


def test_a_pod_bound_by_a_scheduler_proves_it_ran() -> None:
    bound = pod("train-0", "ml", phase="Succeeded", schedulerName="yunikorn", nodeName="n1")
    assert "yunikorn" in RunningSchedulers([bound])


def test_the_volcano_image_or_a_scheduler_name_flag_counts() -> None:
    assert "volcano" in RunningSchedulers([pod("x", image="volcanosh/vc-scheduler:v1.9.0")])
    flagged = pod_from_dict(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "s", "namespace": "kube-system"},
            "spec": {"containers": [{"name": "c", "image": "k8s", "args": ["--scheduler-name=gpu-binpack"]}]},
            "status": {"phase": "Pending"},
        }
    )
    assert "gpu-binpack" in RunningSchedulers([flagged])


def test_a_scheduler_configuration_counts_only_where_a_pod_runs() -> None:
    """A KubeSchedulerConfiguration nobody runs schedules nothing (why-pending's rule, now lint's)."""
    assert "gang" in RunningSchedulers([pod("anything", "sched")], configmaps=[configmap("sched")])
    assert "gang" not in RunningSchedulers([pod("anything", "other")], configmaps=[configmap("sched")])
