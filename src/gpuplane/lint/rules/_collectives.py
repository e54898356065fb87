"""Do a workload's pods talk to each other (collectives, a rendezvous, MPI)?

Rules about co-locating ranks (zone spread, gangs of indexed Jobs) only matter when the pods form
one distributed program. The evidence read here: controllers that wire ranks together by design
(the training operator injects ``MASTER_ADDR``/``WORLD_SIZE`` or ``TF_CONFIG``; LeaderWorkerSet
groups), launchers on the command line (torchrun, DeepSpeed, Horovod, ``accelerate launch``), the
rendezvous environment, and ``mpirun``/``mpiexec`` of a program that is not a one-shot
diagnostic (``mpirun ... fi_info`` or ``hostname`` starts ranks that never communicate).
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable
from typing import Any

from gpuplane.lazy_pattern import LazyPattern
from gpuplane.lint.rules._common import as_dict, as_list, dict_items
from gpuplane.sources.manifest import Manifest

# Controllers whose replicas are ranks of one job by construction (kubeflow/training-operator
# pkg/controller.v1/{pytorch,tensorflow,jax,paddlepaddle,xgboost}: rendezvous env per replica).
WIRED_KINDS = frozenset(
    {"PyTorchJob", "TFJob", "JAXJob", "PaddleJob", "XGBoostJob", "TrainJob", "LeaderWorkerSet", "ElasticJob"}
)
RENDEZVOUS_ENV = frozenset(
    {
        "MASTER_ADDR",
        "MASTER_PORT",
        "WORLD_SIZE",
        "NODE_RANK",
        "PET_NNODES",
        "TF_CONFIG",
        "JAX_COORDINATOR_ADDRESS",
    }
)
_LAUNCHER = LazyPattern(
    r"torchrun|torch\.distributed\.(?:run|launch)|deepspeed|horovodrun|--nnodes|"
    r"--master[_-]addr|jax\.distributed|megatron|init_process_group|(?:all_reduce|all_gather|alltoall|"
    r"reduce_scatter|broadcast|sendrecv)_perf"
)
_MPI_LAUNCHERS = ("mpirun", "mpiexec", "orterun", "prterun", "srun")
# Programs that do not communicate when started on every rank (inventory and smoke checks).
_DIAGNOSTICS = frozenset(
    {
        "fi_info",
        "hostname",
        "nvidia-smi",
        "ibv_devinfo",
        "ibv_devices",
        "ibstat",
        "env",
        "printenv",
        "true",
        "echo",
        "sleep",
        "cat",
        "ls",
        "lspci",
        "date",
        "uname",
    }
)
# mpirun / mpiexec options followed by values (Open MPI mpirun(1), MPICH mpiexec(1), Slurm srun(1)).
_OPTION_VALUES = {
    "--mca": 2,
    "-mca": 2,
    "--gmca": 2,
    "-gmca": 2,
    "-genv": 2,
    "-env": 2,
    **dict.fromkeys(
        (
            "-np",
            "-n",
            "-c",
            "-N",
            "--np",
            "--n",
            "-npernode",
            "--npernode",
            "-ppn",
            "-hostfile",
            "--hostfile",
            "-machinefile",
            "--machinefile",
            "-f",
            "-H",
            "--host",
            "-host",
            "-hosts",
            "--bind-to",
            "-bind-to",
            "--map-by",
            "-map-by",
            "--rank-by",
            "-x",
            "--prefix",
            "-wdir",
            "--wdir",
            "--output-filename",
            "--timeout",
            "--cpus-per-proc",
            "-npersocket",
            "-launcher",
            "--mpi",
            "--ntasks",
            "--nodes",
            "--ntasks-per-node",
            "--gpus-per-task",
        ),
        1,
    ),
}


def _words(container: dict[str, Any]) -> list[str]:
    """``command`` + ``args`` split as a shell would (a ``bash -c`` script is split too)."""
    parts = [str(a) for a in (*as_list(container.get("command")), *as_list(container.get("args")))]
    text = " ".join(parts).replace("\\\n", " ")
    try:
        return shlex.split(text, comments=False, posix=True)
    except ValueError:  # unbalanced quotes: split on blanks
        return text.split()


def _mpi_programs(words: list[str]) -> Iterable[str]:
    """The program each ``mpirun``-like launcher in ``words`` starts (its basename)."""
    i = 0
    while i < len(words):
        word = words[i].rsplit("/", 1)[-1]
        if word not in _MPI_LAUNCHERS:
            i += 1
            continue
        i += 1
        while i < len(words):
            token = words[i]
            if token.startswith("-"):
                i += 1 + (0 if "=" in token else _OPTION_VALUES.get(token, 0))
                continue
            yield token.rsplit("/", 1)[-1]
            break


def container_communicates(container: dict[str, Any]) -> bool | None:
    """True: the container runs a distributed launcher or sets up a rendezvous; False: its only
    launcher starts a diagnostic on every rank; None: nothing says either way."""
    for _i, env in dict_items(container.get("env")):
        name = env.get("name")
        if isinstance(name, str) and name in RENDEZVOUS_ENV:
            return True
    words = _words(container)
    # quoted prose (an `echo "starting all_reduce_perf"`) is one word with blanks: not a command
    if any(_LAUNCHER.search(w) for w in words if not any(ch.isspace() for ch in w)):
        return True
    if "accelerate" in words and "launch" in words:
        return True
    programs = list(_mpi_programs(words))
    if programs:
        return any(p not in _DIAGNOSTICS for p in programs)
    return None


# Volcano Job plugins that wire tasks into one job (volcano-sh/volcano pkg/controllers/job/plugins:
# pytorch sets MASTER_ADDR/WORLD_SIZE, tensorflow TF_CONFIG, mpi the hostfile).
VOLCANO_WIRING_PLUGINS = ("pytorch", "tensorflow", "mpi", "ray")


def _wired(source: Manifest) -> bool:
    if source.kind in WIRED_KINDS or source.kind == "MPIJob":
        return True
    if source.kind == "Job" and source.group == "batch.volcano.sh":
        plugins = as_dict(source.get("spec", "plugins"))
        return any(name in plugins for name in VOLCANO_WIRING_PLUGINS)
    return False


def workload_communicates(source: Manifest, templates: Iterable[Any]) -> bool:
    """Whether the pods of one workload (all its pod templates, launchers included) communicate."""
    verdicts = []
    for template in templates:
        spec = as_dict(as_dict(template).get("spec"))
        for key in ("initContainers", "containers"):
            for _i, c in dict_items(spec.get(key)):
                verdicts.append(container_communicates(c))
    if True in verdicts:
        return True
    if False in verdicts:
        return False  # an MPI launcher of a diagnostic, and nothing else talks
    return _wired(source)
