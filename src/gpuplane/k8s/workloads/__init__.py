"""Workload expansion: every controller kind -> :class:`PodSet` s (template, count, role,
gang membership, queue). Engines read PodSets, never controller fields
(design.md "One model, many engines").

Controllers (one module per family): ``core`` (Pod, Deployment, ReplicaSet,
ReplicationController, StatefulSet, DaemonSet, Job, CronJob), ``kubeflow`` (PyTorchJob,
TFJob, XGBoostJob, PaddleJob, MXJob, JAXJob, MPIJob, TrainJob), ``sigs`` (JobSet,
LeaderWorkerSet), ``ray`` (RayCluster, RayJob, RayService), ``volcano`` (Volcano Job),
``serving`` (KServe InferenceService), ``spark`` (SparkApplication). Gang/queue detection
lives in ``gangs``; DaemonSet node eligibility in ``daemon``.
"""

from gpuplane.k8s.workloads.expand import EXPANDERS, WORKLOAD_KINDS, expand, expand_all, is_workload
from gpuplane.k8s.workloads.model import (
    KNOWN_ROLES,
    ExpandContext,
    ExpansionProblem,
    Gang,
    PodSet,
    Related,
    job_pod_count,
)

__all__ = [
    "EXPANDERS",
    "KNOWN_ROLES",
    "WORKLOAD_KINDS",
    "ExpandContext",
    "ExpansionProblem",
    "Gang",
    "PodSet",
    "Related",
    "expand",
    "expand_all",
    "is_workload",
    "job_pod_count",
]
