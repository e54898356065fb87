"""Is a scheduler called X running? One answer for lint, why-pending and diagnose.

A pod whose ``schedulerName`` no scheduler serves stays Pending forever with no event
(kube-scheduler only takes pods of its own profiles: pkg/scheduler/eventhandlers.go,
``responsibleForPod``). Which schedulers run is read from what a snapshot shows, strongest
evidence first:

- ``default-scheduler`` always runs (a cluster without it is not one gpuplane models);
- a bound pod (``spec.nodeName`` set) whose ``schedulerName`` is X: X bound it;
- a pod not finished whose name starts with a known scheduler's pod name, or contains X;
- a pod not finished running Volcano's scheduler image (``vc-scheduler``) or a command line
  with ``--scheduler-name X``;
- a KubeSchedulerConfiguration in a ConfigMap naming profile X, in a namespace where a pod is
  Running (a configuration nobody runs schedules nothing);
- a Deployment/StatefulSet (from the input being applied, or the cluster) whose pod template
  runs the Volcano scheduler or passes ``--scheduler-name X`` (lint: objects applied together).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from gpuplane.k8s.fields import as_dict, as_list, as_str
from gpuplane.k8s.manifest import Manifest
from gpuplane.k8s.objects import Pod
from gpuplane.k8s.wellknown import DEFAULT_SCHEDULER, VOLCANO_SCHEDULER

# Names the usual second schedulers run under, and the names of their pods.
KNOWN_SCHEDULER_PODS = {
    VOLCANO_SCHEDULER: ("volcano-scheduler",),
    "scheduler-plugins-scheduler": ("scheduler-plugins-scheduler",),
    "kai-scheduler": ("kai-scheduler", "scheduler"),
    "yunikorn": ("yunikorn-scheduler",),
}
VOLCANO_IMAGE = "vc-scheduler"
_FINISHED = ("Succeeded", "Failed")
_SCHED_ARG = re.compile(r"--scheduler-name[= ]([A-Za-z0-9._-]+)")
_SCHED_CONF = re.compile(r"schedulerName:\s*[\"']?([A-Za-z0-9._-]+)")


def command_line(container: dict[str, Any]) -> str:
    """``command`` and ``args`` of a container dict joined into one line."""
    return " ".join(str(a) for a in (*as_list(container.get("command")), *as_list(container.get("args"))))


def _from_command(image: str, line: str, names: set[str]) -> None:
    if VOLCANO_IMAGE in image:
        names.add(VOLCANO_SCHEDULER)
    names.update(_SCHED_ARG.findall(line))


class RunningSchedulers:
    """The evidence of a cluster (and the objects applied with it), gathered once."""

    def __init__(
        self, pods: Iterable[Pod], controllers: Iterable[Manifest] = (), configmaps: Iterable[Manifest] = ()
    ) -> None:
        names = {DEFAULT_SCHEDULER}
        running_pods: list[str] = []
        running_namespaces: set[str] = set()
        for pod in pods:
            if pod.spec.node_name and pod.spec.scheduler_name:
                names.add(pod.spec.scheduler_name)
            if pod.status.phase in _FINISHED:
                continue
            if pod.status.phase == "Running":
                running_pods.append(pod.metadata.name)
                running_namespaces.add(pod.metadata.namespace or "default")
            for c in pod.spec.containers:
                _from_command(c.image or "", " ".join([*c.command, *c.args]), names)
        for obj in controllers:
            template = as_dict(obj.get("spec", "template"))
            for c in as_list(as_dict(template.get("spec")).get("containers")):
                if isinstance(c, dict):
                    _from_command(as_str(c.get("image"), ""), command_line(c), names)
        for cm in configmaps:
            if (cm.namespace or "default") not in running_namespaces:
                continue
            data = cm.data.get("data")
            for text in data.values() if isinstance(data, dict) else ():
                if isinstance(text, str) and "KubeSchedulerConfiguration" in text:
                    names.update(_SCHED_CONF.findall(text))
        self.names = names
        self._running_pods = running_pods

    def __contains__(self, name: object) -> bool:
        """Does a scheduler called ``name`` run?"""
        if not isinstance(name, str):
            return False
        if name in self.names:
            return True
        hints = KNOWN_SCHEDULER_PODS.get(name, (name,))
        return any(pod.startswith(hints) or name in pod for pod in self._running_pods)
