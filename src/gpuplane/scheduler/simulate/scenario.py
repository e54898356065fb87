"""Turn the submitted manifests into simulation jobs: pods, arrival, duration, image size.

Times come from annotations on the workload object (``gpuplane.io/arrival-s``,
``gpuplane.io/duration-s``, ``gpuplane.io/image-size-gib``) or from a scenario file
(``--scenario FILE``), which wins::

    apiVersion: gpuplane.io/v1alpha1
    kind: Scenario
    workloads:
    - name: train-a            # metadata.name; namespace / kind narrow the match
      arrival_s: 0
      duration_s: 3600
      image_size_gib: 12
    coldStart: {vm_provisioning: 120}          # seconds, per gpu/data/cold_start.yaml component
    kueue: {waitForPodsReady: {timeoutSeconds: 600}}   # or {waitForPodsReady: null} = off
    coscheduling: {permitWaitingTimeSeconds: 60, podGroupRejectPercentage: 10}

A workload without a duration runs until the end of the simulation (a server).

Suspended workloads (``spec.suspend`` / ``runPolicy.suspend: true``) create no pods. One
labelled ``kueue.x-k8s.io/queue-name`` is how Kueue users submit: Kueue unsuspends it on
admission (reference/scheduling.md §4.4), so under ``--scheduler kueue`` it is submitted with
the size it resumes with (``PodSet.resume_count``) and waits for admission like any Kueue
workload. Any other suspended workload is left out with a note: nothing resumes it.
Pods are named as their controllers name them where that is fixed (training operators,
Volcano: ``<job>-<replica type>-<index>``), else ``<object>-<podset>-<index>``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import msgspec

from gpuplane.gpu.resources import is_gpu_resource
from gpuplane.k8s.objects import Pod
from gpuplane.k8s.requests import pod_requests
from gpuplane.k8s.validation import extended_resource_errors, invalid_message
from gpuplane.k8s.workloads import PodSet, Related, expand, expand_all
from gpuplane.k8s.workloads.gangs import KUEUE_QUEUE, kueue_queue
from gpuplane.scheduler.simulate.model import SimJob, SimPod
from gpuplane.sources.manifest import Manifest

ARRIVAL = "gpuplane.io/arrival-s"
DURATION = "gpuplane.io/duration-s"
IMAGE_SIZE = "gpuplane.io/image-size-gib"


class ScenarioError(ValueError):
    """A scenario file or annotation that cannot be used (one clear line)."""


def _settings_models() -> tuple[type[Any], type[Any]]:
    """The typed ``kueue`` and ``coscheduling`` sections (pydantic, built on first use for
    start-up time). Numbers of seconds are numbers (``5m`` is refused, as Kueue's config
    takes ``timeout`` as a duration but gpuplane's scenario takes seconds)."""
    from pydantic import BaseModel, ConfigDict, Field  # deferred for start-up time

    class WaitForPodsReady(BaseModel):
        model_config = ConfigDict(extra="forbid", strict=True)
        timeoutSeconds: float = Field(default=300.0, ge=0, allow_inf_nan=False)

    class KueueSettings(BaseModel):
        model_config = ConfigDict(extra="forbid", strict=True)
        waitForPodsReady: WaitForPodsReady | None = None

    class CoschedulingSettings(BaseModel):
        model_config = ConfigDict(extra="forbid", strict=True)
        permitWaitingTimeSeconds: float = Field(default=60.0, ge=0, allow_inf_nan=False)
        podGroupRejectPercentage: float = Field(default=10.0, ge=0, le=100, allow_inf_nan=False)

    return KueueSettings, CoschedulingSettings


@dataclass(slots=True)
class Timing:
    arrival_s: float = 0.0
    duration_s: float | None = None
    image_gib: float | None = None


@dataclass(slots=True)
class Scenario:
    """Per-workload timing overrides and model settings."""

    workloads: list[dict[str, Any]] = field(default_factory=list)
    cold_start: dict[str, float] = field(default_factory=dict)
    kueue: dict[str, Any] = field(default_factory=dict)
    coscheduling: dict[str, Any] = field(default_factory=dict)

    def timing_for(self, obj: Manifest) -> dict[str, Any]:
        for entry in self.workloads:
            if entry.get("name") != obj.name:
                continue
            if entry.get("namespace") not in (None, obj.namespace or "default"):
                continue
            if entry.get("kind") not in (None, obj.kind):
                continue
            return entry
        return {}


def _number(value: Any, what: str, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool):
        raise ScenarioError(f"{where}: {what} must be a number of seconds, got {value!r}")
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        raise ScenarioError(f"{where}: {what} must be a number, got {value!r}") from None
    if not math.isfinite(number):
        # "inf", "1e400" (parses to inf), "nan": no event can happen at such a time.
        raise ScenarioError(f"{where}: {what} must be a finite number, got {value!r}")
    if number < 0:
        raise ScenarioError(f"{where}: {what} must be >= 0, got {value!r}")
    return number


def load_scenario(path: str) -> Scenario:
    """Read a scenario file (YAML or JSON)."""
    from gpuplane.scheduler.simulate.coldstart import parse_overrides  # deferred for start-up time
    from gpuplane.sources.side_input import SideInputError, read_document

    try:
        data = read_document(path)
    except SideInputError as exc:
        raise ScenarioError(str(exc)) from None
    if not isinstance(data, dict):
        raise ScenarioError(f"{path}: a scenario is a mapping with a 'workloads' list")
    workloads = data.get("workloads") or []
    if not isinstance(workloads, list) or not all(isinstance(w, dict) and w.get("name") for w in workloads):
        raise ScenarioError(f"{path}: 'workloads' must be a list of mappings, each with a 'name'")
    for entry in workloads:
        where = f"{path}: workload {entry['name']}"
        _number(entry.get("arrival_s"), "arrival_s", where)
        _number(entry.get("duration_s"), "duration_s", where)
        _number(entry.get("image_size_gib"), "image_size_gib", where)
    cold, errors = parse_overrides(data.get("coldStart") or {})
    if errors:
        raise ScenarioError(f"{path}: {errors[0]}")
    kueue = data.get("kueue") or {}
    cosched = data.get("coscheduling") or {}
    if not isinstance(kueue, dict) or not isinstance(cosched, dict):
        raise ScenarioError(f"{path}: 'kueue' and 'coscheduling' must be mappings")
    from gpuplane.sources.typed import TypedInputError, validate  # for start-up time

    kueue_model, cosched_model = _settings_models()
    try:
        validate(kueue_model, kueue, path, ("kueue",))
        validate(cosched_model, cosched, path, ("coscheduling",))
    except TypedInputError as exc:
        raise ScenarioError(str(exc)) from None
    return Scenario(list(workloads), cold, dict(kueue), dict(cosched))


def timing(obj: Manifest, scenario: Scenario | None) -> Timing:
    """Arrival / duration / image size of one workload (scenario entry, then annotations)."""
    where = f"{obj.kind} {obj.namespace or 'default'}/{obj.name}"
    entry = scenario.timing_for(obj) if scenario is not None else {}
    ann = obj.annotations

    def pick(key: str, annotation: str) -> float | None:
        if key in entry:
            return _number(entry[key], key, where)
        return _number(ann.get(annotation), annotation, where)

    arrival = pick("arrival_s", ARRIVAL)
    return Timing(arrival or 0.0, pick("duration_s", DURATION), pick("image_size_gib", IMAGE_SIZE))


def _gpus(pod: Pod) -> int:
    try:
        requests = pod_requests(pod)
    except (ValueError, TypeError):
        return 0
    return sum(v for k, v in requests.items() if is_gpu_resource(k))


def _with_priority_class(pod: Pod, priority_class: str | None) -> Pod:
    if priority_class and not pod.spec.priority_class_name and pod.spec.priority is None:
        return msgspec.structs.replace(
            pod, spec=msgspec.structs.replace(pod.spec, priority_class_name=priority_class)
        )
    return pod


# Kinds whose pod template the API server validates when the object itself is created
# (pkg/apis/core/validation ValidatePodTemplateSpec via the apps/batch/core validators): such
# an object is refused outright. Pods of any other controller (CRDs) are refused one by one
# when the operator creates them.
TEMPLATE_VALIDATED = {
    ("", "Pod"),
    ("", "ReplicationController"),
    ("", "PodTemplate"),
    ("apps", "Deployment"),
    ("apps", "ReplicaSet"),
    ("apps", "StatefulSet"),
    ("apps", "DaemonSet"),
    ("batch", "Job"),
    ("batch", "CronJob"),
}


def _field_path(path: tuple[str | int, ...]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def validation_errors(ps: PodSet) -> tuple[str, str, str | None, list[str]] | None:
    """The API's verdict on a pod set's template: ``(kind, group, name, errors)``; ``name`` is
    the object's when the object is refused, None when each created pod is (its own name)."""
    obj = ps.source
    if (obj.group, obj.kind) in TEMPLATE_VALIDATED and not ps.synthetic:
        spec = ps.template.get("spec") if isinstance(ps.template, dict) else None
        errors = extended_resource_errors(spec or {}, _field_path(ps.spec_path))
        return (obj.kind, obj.group, obj.name, errors) if errors else None
    spec = ps.template.get("spec") if isinstance(ps.template, dict) else None
    errors = extended_resource_errors(spec or {}, "spec")
    return ("Pod", "", None, errors) if errors else None


def make_pods(job: SimJob) -> None:
    """(Re)create the job's pods from its pod sets: every replica shares its template's spec
    object, so the scheduler computes per-template work once."""
    job.pods = []
    for ps_name, count, template in job.podsets:
        gpus = _gpus(template)
        invalid = job.invalid.get(ps_name)
        for i in range(count):
            if job.kind == "Pod":
                name = job.name
            elif ps_name == job.name.lower():
                name = f"{job.name}-{i}"
            else:
                name = f"{job.name}-{ps_name}-{i}"
            meta = msgspec.structs.replace(
                template.metadata, name=name, namespace=job.namespace, uid=f"sim-{job.namespace}-{name}"
            )
            pod = msgspec.structs.replace(template, metadata=meta)
            sim_pod = SimPod(f"{job.namespace}/{name}", pod, job, gpus, len(job.pods))
            if invalid is not None:
                kind, group, obj_name, errors = invalid
                sim_pod.refusal = invalid_message(kind, group, obj_name or name, errors)
            job.pods.append(sim_pod)


def suspend_field(obj: Manifest) -> str:
    """The field that holds ``obj`` suspended (for notes)."""
    if obj.get("spec", "runPolicy", "suspend") is True:
        return "spec.runPolicy.suspend"
    if obj.kind == "CronJob" and obj.get("spec", "suspend") is not True:
        return "spec.jobTemplate.spec.suspend"
    return "spec.suspend"


def resumed(obj: Manifest) -> Manifest:
    """A copy of ``obj`` with its suspension lifted (what the object is once Kueue admits it);
    the pod templates are shared, not copied."""
    data = dict(obj.data)
    spec = dict(data.get("spec") or {})
    data["spec"] = spec
    if spec.get("suspend") is True and obj.kind != "CronJob":
        spec["suspend"] = False
    policy = spec.get("runPolicy")
    if isinstance(policy, dict) and policy.get("suspend") is True:
        spec["runPolicy"] = {**policy, "suspend": False}
    template = spec.get("jobTemplate")
    if obj.kind == "CronJob" and isinstance(template, dict) and isinstance(template.get("spec"), dict):
        spec["jobTemplate"] = {**template, "spec": {**template["spec"], "suspend": False}}
    return Manifest(data, obj.path, obj.line, obj.doc)


def _resume_sets(obj: Manifest, kueue: bool, related: Related, notes: list[str]) -> list[PodSet]:
    """The pod sets to simulate for a suspended workload (see module docstring); ``[]`` + a note
    when nothing will resume it in this run."""
    where = f"{obj.kind} {obj.namespace or 'default'}/{obj.name}"
    field = suspend_field(obj)
    queue = kueue_queue(obj)
    if queue is not None and kueue and not (obj.kind == "CronJob" and obj.get("spec", "suspend") is True):
        return [ps for ps in expand(resumed(obj), related=related) if ps.count > 0]
    text = f"{where} is suspended: creates no pods until {field} is false"
    if queue is not None and not kueue:
        text += f" (labelled {KUEUE_QUEUE}={queue}: Kueue resumes it on admission; simulate with --scheduler kueue)"
    notes.append(text)
    return []


def build_jobs(
    objects: list[Manifest],
    scenario: Scenario | None,
    priority_of: Any,
    *,
    kueue: bool = False,
    notes: list[str] | None = None,
) -> list[SimJob]:
    """One SimJob per workload object, in submission order; ``priority_of(pod) -> int``.
    ``kueue``: Kueue admits workloads (suspended Kueue workloads are submitted resumed);
    ``notes`` receives one line per suspended workload left out."""
    podsets = expand_all(objects)
    related = Related.from_objects(objects) if any(ps.suspended for ps in podsets) else Related()
    notes = notes if notes is not None else []
    by_source: dict[int, list[PodSet]] = {}
    order: list[Manifest] = []
    for ps in podsets:
        bucket = by_source.get(id(ps.source))
        if bucket is None:
            by_source[id(ps.source)] = bucket = []
            order.append(ps.source)
        bucket.append(ps)
    jobs: list[SimJob] = []
    for n, obj in enumerate(order):
        sets = [ps for ps in by_source[id(obj)] if ps.count > 0]
        if not sets and any(ps.suspended for ps in by_source[id(obj)]):
            sets = _resume_sets(obj, kueue, related, notes)
        if not sets:
            continue
        t = timing(obj, scenario)
        ns = obj.namespace or "default"
        templates = []
        invalid = {}
        for ps in sets:
            base = _with_priority_class(ps.pod(), ps.priority_class)
            ps_name = ps.name.lower() if obj.kind != "Pod" else ps.name
            templates.append((ps_name, ps.count, base))
            verdict = validation_errors(ps)
            if verdict is not None:
                invalid[ps_name] = verdict
        total = sum(ps.count for ps in sets)
        gang = next((ps.gang for ps in sets if ps.gang is not None), None)
        min_member = gang.min_member if gang is not None and gang.min_member else total
        distributed = any(ps.distributed for ps in sets) or (gang is not None and total > 1)
        job = SimJob(
            key=f"{obj.kind}/{ns}/{obj.name}",
            kind=obj.kind,
            namespace=ns,
            name=obj.name,
            arrival_s=t.arrival_s,
            duration_s=t.duration_s,
            image_gib=t.image_gib,
            distributed=distributed,
            min_member=min(min_member, total),
            queue=next((ps.queue for ps in sets if ps.queue), None),
            kueue_queue=kueue_queue(obj),
            priority=priority_of(templates[0][2]),
            order=n,
            group=obj.group,
            podsets=templates,
            invalid=invalid,
        )
        make_pods(job)
        jobs.append(job)
    return jobs
