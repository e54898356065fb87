"""The training-kind sets, defined once in k8s.wellknown, and what each reader builds from them."""

from __future__ import annotations

from gpuplane.diagnose.gangs import TRAINING_OWNERS
from gpuplane.k8s.wellknown import KUBEFLOW_TRAINING_KINDS, TRAINING_KINDS
from gpuplane.k8s.workloads.kubeflow import REPLICA_FIELDS
from gpuplane.lint.kinds import TRAINING_KINDS as LINT_TRAINING_KINDS
from gpuplane.usage.join import TRAINING_KINDS as USAGE_TRAINING_KINDS
from gpuplane.usage.join import Owner, category_of

KUBEFLOW = {"PyTorchJob", "TFJob", "MPIJob", "XGBoostJob", "PaddleJob", "JAXJob", "MXJob"}


def test_kubeflow_kinds_are_the_kinds_with_replica_specs() -> None:
    assert set(KUBEFLOW_TRAINING_KINDS) == KUBEFLOW == set(REPLICA_FIELDS)


def test_every_reader_builds_on_the_one_set() -> None:
    # lint, diagnose and the usage report agree on MXJob (training-operator v1.8.x served it,
    # v1.9.0 removed it: kubeflow/trainer PR #2150), so an MXJob is training in all three.
    assert set(TRAINING_OWNERS) == KUBEFLOW
    assert set(TRAINING_KINDS) == KUBEFLOW | {"TrainJob", "JobSet", "RayJob"}
    assert LINT_TRAINING_KINDS is TRAINING_KINDS
    assert set(USAGE_TRAINING_KINDS) == KUBEFLOW | {
        "Job",
        "CronJob",
        "TrainJob",
        "JobSet",
        "RayJob",
        "Workflow",
    }


def test_an_mxjob_pod_is_training_in_the_usage_report() -> None:
    assert category_of(Owner("kubeflow.org/v1", "MXJob", "ml", "byteps"), None) == "training"
