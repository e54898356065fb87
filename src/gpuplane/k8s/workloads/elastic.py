"""Elastic and managed PyTorch training jobs: DLRover and TorchElastic ``ElasticJob``, SageMaker
HyperPod ``HyperPodPyTorchJob``.

- DLRover ``elastic.iml.github.io/v1alpha1`` ElasticJob (intelligent-machine-learning/dlrover
  ``go/elasticjob/api/v1alpha1/elasticjob_types.go``): ``spec.replicaSpecs`` maps a replica type
  (``worker``, ``ps``, ``chief``, ``evaluator`` ...) to a replica spec with ``replicas`` and a pod
  ``template`` (the kubeflow common ``ReplicaSpec`` plus ``restartCount``/``autoScale``).
- TorchElastic ``elastic.pytorch.org/v1alpha1`` ElasticJob (pytorch/elastic ``kubernetes/api/
  v1alpha1/elasticjob_types.go``): ``spec.replicaSpecs`` (``Worker``: ``replicas``, ``template``),
  with ``minReplicas``/``maxReplicas`` bounding the workers: the rendezvous trains once
  ``minReplicas`` workers joined, so that minimum is the job's gang (mechanism ``torchelastic``).
- HyperPod ``sagemaker.amazonaws.com/v1`` HyperPodPyTorchJob (aws/sagemaker-hyperpod-cli
  ``hyperpod-pytorch-job-template/hyperpod_pytorch_job_template/v1_1/template.py``, the manifest
  the CLI submits): ``spec.replicaSpecs`` is a list of ``{name, replicas, template}``,
  ``spec.nprocPerNode`` processes per pod.

``replicas`` defaults to 1 as in the kubeflow common ``ReplicaSpec``. Every pod of such a job
belongs to one computation (rendezvous or parameter servers), so the sets are ``distributed``
when the job has more than one pod.
"""

from __future__ import annotations

from gpuplane.k8s.manifest import Manifest
from gpuplane.k8s.workloads.gangs import finish
from gpuplane.k8s.workloads.model import (
    ExpandContext,
    Gang,
    PodSet,
    as_dict,
    as_int,
    as_list,
    as_str,
    mark_distributed,
    nonneg,
    role_from_name,
)

TORCHELASTIC_GROUP = "elastic.pytorch.org"


def expand_elasticjob(obj: Manifest, ctx: ExpandContext) -> list[PodSet]:
    spec = as_dict(obj.data.get("spec"))
    podsets: list[PodSet] = []
    for rtype, rspec in as_dict(spec.get("replicaSpecs")).items():
        if not isinstance(rtype, str):
            continue
        path = ("spec", "replicaSpecs", rtype, "template")
        template = ctx.template(obj, rspec, "template", path)
        if template is None:
            continue
        name = rtype.lower()
        replicas = nonneg(as_int(as_dict(rspec).get("replicas"), 1))
        ps = PodSet(obj, name, role_from_name(name, "worker"), replicas, template, path)
        if name == "worker":
            ps.max_count = as_int(spec.get("maxReplicas"), None)
        podsets.append(ps)
    if not podsets:
        return []
    mark_distributed(podsets)
    native = None
    minimum = as_int(spec.get("minReplicas"), None)
    if obj.group == TORCHELASTIC_GROUP and minimum is not None:
        # the rendezvous starts training once minReplicas workers joined and admits more up to
        # maxReplicas: partial placement is the design, the elastic minimum is its gang
        native = Gang("torchelastic", obj.name, max(minimum, 1))
    return finish(obj, podsets, ctx.related, native=native)


def expand_hyperpod_pytorchjob(obj: Manifest, ctx: ExpandContext) -> list[PodSet]:
    spec = as_dict(obj.data.get("spec"))
    podsets: list[PodSet] = []
    for index, rspec in enumerate(as_list(spec.get("replicaSpecs"))):
        path = ("spec", "replicaSpecs", index, "template")
        template = ctx.template(obj, rspec, "template", path)
        if template is None:
            continue
        name = as_str(as_dict(rspec).get("name")) or f"replica-{index}"
        replicas = nonneg(as_int(as_dict(rspec).get("replicas"), 1))
        podsets.append(PodSet(obj, name, role_from_name(name, "worker"), replicas, template, path))
    if not podsets:
        return []
    mark_distributed(podsets)
    return finish(obj, podsets, ctx.related)
