"""The training-kind sets, defined once in k8s.wellknown, and what each reader builds from them."""

from __future__ import annotations

from gpuplane.diagnose.gangs import TRAINING_OWNERS
from gpuplane.k8s.wellknown import KUBEFLOW_TRAINING_KINDS
from gpuplane.k8s.workloads.kubeflow import REPLICA_FIELDS
from gpuplane.lint.kinds import TRAINING_KINDS as LINT_TRAINING_KINDS
from gpuplane.usage.join import TRAINING_KINDS as USAGE_TRAINING_KINDS

KUBEFLOW = {"PyTorchJob", "TFJob", "MPIJob", "XGBoostJob", "PaddleJob", "JAXJob", "MXJob"}


def test_kubeflow_kinds_are_the_kinds_with_replica_specs() -> None:
    assert set(KUBEFLOW_TRAINING_KINDS) == KUBEFLOW == set(REPLICA_FIELDS)


def test_each_reader_keeps_its_own_set() -> None:
    assert set(TRAINING_OWNERS) == KUBEFLOW
    assert set(LINT_TRAINING_KINDS) == KUBEFLOW | {"TrainJob", "JobSet", "RayJob"}
    assert set(USAGE_TRAINING_KINDS) == (KUBEFLOW - {"MXJob"}) | {
        "Job",
        "CronJob",
        "TrainJob",
        "JobSet",
        "RayJob",
        "Workflow",
    }
