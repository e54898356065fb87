"""Well-known names of Kubernetes, Kueue, Volcano and scheduler-plugins, defined once.

Each value is the upstream constant it mirrors (file cited beside it); every module that needs
one imports it from here instead of writing the string again, so two readers cannot disagree.
"""

from __future__ import annotations

# kubernetes/kubernetes staging/src/k8s.io/api/core/v1/types.go (DefaultSchedulerName)
DEFAULT_SCHEDULER = "default-scheduler"

# kubernetes-sigs/kueue pkg/controller/constants/constants.go, pkg/controller/jobs/pod/constants
KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
KUEUE_POD_GROUP = "kueue.x-k8s.io/pod-group-name"
KUEUE_POD_GROUP_TOTAL = "kueue.x-k8s.io/pod-group-total-count"
KUEUE_JOB_MIN_PARALLELISM = "kueue.x-k8s.io/job-min-parallelism"
# kueue pkg/controller/jobs/pod (SchedulingGateName) and pkg/controller/tas (TopologySchedulingGate)
KUEUE_ADMISSION_GATE = "kueue.x-k8s.io/admission"
KUEUE_TOPOLOGY_GATE = "kueue.x-k8s.io/topology"

# volcano-sh/apis pkg/apis/scheduling/v1beta1/labels.go
VOLCANO_SCHEDULER = "volcano"
VOLCANO_GROUP_ANNOTATION = "scheduling.k8s.io/group-name"
VOLCANO_QUEUE = "scheduling.volcano.sh/queue-name"
VOLCANO_QUEUE_SHORT = "volcano.sh/queue-name"
VOLCANO_MIN_MEMBER = "scheduling.volcano.sh/group-min-member"

# kubernetes-sigs/scheduler-plugins apis/scheduling/v1alpha1/types.go (PodGroupLabel), then the
# keys of older releases
COSCHEDULING_LABELS = (
    "scheduling.x-k8s.io/pod-group",
    "pod-group.scheduling.x-k8s.io",
    "pod-group.scheduling.sigs.k8s.io",
)
COSCHEDULING_GROUPS = ("scheduling.x-k8s.io", "scheduling.sigs.k8s.io")

# The job kinds of the Kubeflow training-operator v1 (kubeflow/trainer, formerly
# kubeflow/training-operator, pkg/apis/kubeflow.org/v1, one <kind>_types.go each) and of
# mpi-operator (kubeflow/mpi-operator pkg/apis/kubeflow/v2beta1): every pod of one is a rank of a
# single distributed job. Their replica-spec fields are workloads.kubeflow.REPLICA_FIELDS, whose
# keys a test holds equal to this set. The v1 line served MXJob up to v1.8.x (mxnet_types.go at
# tag v1.8.1, deprecated there) and dropped it in v1.9.0 (PR #2150 "Remove support for MXJob",
# after Apache MXNet was archived), the release that added JAXJob (jax_types.go); an MXJob found
# in a cluster still run by a v1.8 operator is a training job like the others, so the kind stays.
KUBEFLOW_TRAINING_KINDS = frozenset(
    {"PyTorchJob", "TFJob", "MPIJob", "XGBoostJob", "PaddleJob", "JAXJob", "MXJob"}
)
# Training controllers beyond those: Kubeflow Trainer v2 (TrainJob, trainer.kubeflow.org
# pkg/apis/trainer/v1alpha1/trainjob_types.go; its TrainingRuntimes are templates, not jobs),
# JobSet, KubeRay (RayJob).
OTHER_TRAINING_KINDS = frozenset({"TrainJob", "JobSet", "RayJob"})
# Every training controller's kind: what lint's and the usage report's "training" start from.
TRAINING_KINDS = KUBEFLOW_TRAINING_KINDS | OTHER_TRAINING_KINDS
