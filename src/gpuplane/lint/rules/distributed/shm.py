"""``/dev/shm`` of training pods: too small (the 64 MiB container default) or unbounded."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from gpuplane.lazy_pattern import LazyPattern
from gpuplane.lint import kinds
from gpuplane.lint.context import pod_spec
from gpuplane.lint.finding import AppendItem, Finding, SetValue
from gpuplane.lint.rules._common import as_list, as_str, dict_items, where
from gpuplane.ruleset import rule

if TYPE_CHECKING:
    from gpuplane.lint.context import LintContext

SHM_PATH = "/dev/shm"
SHM_VOLUME = "dshm"
SHM_DEFAULT_SIZE = "16Gi"

# Whole words (of the lower-cased image, command and args) naming an ML framework or launcher
# that moves data through /dev/shm (DataLoader workers, NCCL, MPI shared-memory transport).
_ML_WORDS = LazyPattern(
    r"(?<![a-z0-9])(?:torch|pytorch|torchrun|tensorflow|jax|deepspeed|megatron|nemo|horovod|horovodrun|mpirun|"
    r"accelerate|vllm|tgi|text-generation|text-generation-inference|text-generation-launcher|sglang|trtllm|"
    r"tensorrt-llm|ray|paddle|paddlepaddle|mxnet|byteps|mindspore|nccl|lightning|transformers)(?![a-z])"
)


def runs_ml_framework(container: dict[str, Any]) -> bool:
    """The container's image, ``command`` or ``args`` names a known ML framework or launcher."""
    parts: list[str] = []
    image = container.get("image")
    if isinstance(image, str):
        parts.append(image)
    for key in ("command", "args"):
        value = container.get(key)
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, list):
            parts.extend(v for v in value if isinstance(v, str))
    return bool(parts) and _ML_WORDS.search(" ".join(parts).lower()) is not None


# DataLoader worker counts on the command line: PyTorch's example scripts (--workers / -j), Hugging
# Face Trainer (--dataloader_num_workers), Lightning and most training scripts (--num-workers).
_WORKERS_ARG = LazyPattern(
    r"(?:^|\s)(?:--(?:workers|num[-_]workers|dataloader[-_]num[-_]workers|num[-_]data[-_]workers)|-j)"
    r"(?:=|\s+)(\d+)(?=\s|$)"
)
_WORKERS_ENV = ("NUM_WORKERS", "DATALOADER_NUM_WORKERS")


def dataloader_workers(container: dict[str, Any]) -> int | None:
    """The DataLoader worker processes the container is told to start, None when it does not say.

    Worker processes hand batches to the trainer through /dev/shm; with 0 workers (PyTorch's
    default) the main process loads data itself and shared memory is not used for it."""
    parts = [
        str(a)
        for a in (*as_list(container.get("command")), *as_list(container.get("args")))
        if isinstance(a, (str, int))
    ]
    counts = [int(m.group(1)) for m in _WORKERS_ARG.finditer(" ".join(parts))]
    for _i, env in dict_items(container.get("env")):
        value = env.get("value")
        if env.get("name") in _WORKERS_ENV and isinstance(value, str) and value.strip().isdigit():
            counts.append(int(value))
    return max(counts) if counts else None


def _volume_index(spec: dict[str, Any]) -> dict[str, tuple[int, dict[str, Any]]]:
    out: dict[str, tuple[int, dict[str, Any]]] = {}
    for i, vol in dict_items(spec.get("volumes")):
        if isinstance(vol.get("name"), str):
            out[vol["name"]] = (i, vol)
    return out


def _shm_mount(container: dict[str, Any]) -> tuple[int, str] | None:
    for j, m in dict_items(container.get("volumeMounts")):
        if as_str(m.get("mountPath")).rstrip("/") == SHM_PATH:
            return j, as_str(m.get("name"))
    return None


def _bytes(value: Any) -> int | None:
    """Whole bytes of a memory quantity (k8s.quantity grammar), None when the API would refuse it."""
    q = kinds.quantity_value(value)
    return None if q is None else int(q)


def _shm_size(container: dict[str, Any]) -> str:
    """A /dev/shm sizeLimit: half the container's memory limit (it counts against it), at most 16Gi."""
    res = container.get("resources")
    limits = res.get("limits") if isinstance(res, dict) else None
    memory = _bytes(limits.get("memory")) if isinstance(limits, dict) else None
    if memory is None:
        return SHM_DEFAULT_SIZE
    gib = max(1, min(16, memory // 2 // 2**30))
    return f"{gib}Gi"


def _free_volume_name(volumes: dict[str, Any]) -> str:
    name, n = SHM_VOLUME, 1
    while name in volumes:
        name, n = f"{SHM_VOLUME}-{n}", n + 1
    return name


@rule(
    id="shm-too-small",
    severity="warning",
    category="distributed",
    summary="GPU training / multi-GPU container without a memory-backed emptyDir at /dev/shm (64 MiB default).",
    fixable=True,
    fix_safety="unsafe",
)
def shm_too_small(ctx: LintContext) -> Iterator[Finding]:
    for ps in ctx.gpu_podsets():
        spec = pod_spec(ps)
        if spec.get("hostIPC") is True:
            continue
        training = kinds.is_training(ps)
        volumes = _volume_index(spec)
        new_volume: str | None = None
        for c in ctx.containers(ps, ("containers",)):
            gpus = sum(c.gpu_requests().values())
            if gpus == 0 or ps.shm_managed(c.index):
                continue
            framework = runs_ml_framework(c.data)
            if not (training or framework):
                continue
            # /dev/shm is really used by several GPUs in one pod (NCCL's intra-node SHM/P2P transport,
            # one process per GPU) or by DataLoader worker processes; one GPU with no (or 0)
            # workers never fills the 64 MiB default.
            workers = dataloader_workers(c.data)
            if gpus < 2 and not (workers and workers > 0):
                continue
            mount = _shm_mount(c.data)
            if mount is not None:
                _j, vol_name = mount
                found = volumes.get(vol_name)
                if found is None:
                    continue  # a mount of a missing volume is an API error reported elsewhere
                i, vol = found
                ed = vol.get("emptyDir")
                if not isinstance(ed, dict) and "emptyDir" not in vol:
                    continue  # hostPath / other memory-backed sources are the user's choice
                if isinstance(ed, dict) and ed.get("medium") == "Memory":
                    continue
                yield ctx.report(
                    ps.source,
                    (*ps.spec_path, "volumes", i, "emptyDir"),
                    f"{where(ps, c)} mounts /dev/shm from emptyDir {vol_name} on disk, not in "
                    "memory: shared-memory segments (DataLoader, NCCL) go through the node's disk.",
                    f"Set medium: Memory and a sizeLimit on volume {vol_name}.",
                    patch=(
                        SetValue((*ps.spec_path, "volumes", i, "emptyDir", "medium"), "Memory"),
                        SetValue((*ps.spec_path, "volumes", i, "emptyDir", "sizeLimit"), _shm_size(c.data)),
                    ),
                )
                continue
            ops: list[Any] = []
            if new_volume is None:
                new_volume = _free_volume_name(volumes)
                ops.append(
                    AppendItem(
                        (*ps.spec_path, "volumes"),
                        {
                            "name": new_volume,
                            "emptyDir": {"medium": "Memory", "sizeLimit": _shm_size(c.data)},
                        },
                    )
                )
            ops.append(AppendItem((*c.path, "volumeMounts"), {"name": new_volume, "mountPath": SHM_PATH}))
            what = "GPU training" if training else f"{gpus}-GPU"
            yield ctx.report(
                ps.source,
                (*c.path, "name"),
                f"{where(ps, c)} ({what}) has no memory-backed /dev/shm: it gets the 64 MiB "
                'container default, so PyTorch DataLoader workers die with "Bus error" and NCCL fails to extend '
                "/dev/shm.",
                f"Mount an emptyDir with medium: Memory and a sizeLimit (e.g. {_shm_size(c.data)}) at /dev/shm in "
                f"container {c.name}.",
                patch=tuple(ops),
            )


@rule(
    id="shm-unbounded",
    severity="info",
    category="distributed",
    summary="Memory-backed /dev/shm without sizeLimit: counts against the memory limit (OOMKill).",
    fixable=True,
    fix_safety="unsafe",
    tier="opt-in",
)
def shm_unbounded(ctx: LintContext) -> Iterator[Finding]:
    for ps in ctx.podsets:
        spec = pod_spec(ps)
        volumes = _volume_index(spec)
        if not volumes:
            continue
        reported: set[str] = set()
        for c in ctx.containers(ps):
            mount = _shm_mount(c.data)
            if mount is None or mount[1] in reported or mount[1] not in volumes:
                continue
            i, vol = volumes[mount[1]]
            ed = vol.get("emptyDir")
            if not isinstance(ed, dict) or ed.get("medium") != "Memory" or ed.get("sizeLimit"):
                continue
            reported.add(mount[1])
            size = _shm_size(c.data)
            yield ctx.report(
                ps.source,
                (*ps.spec_path, "volumes", i, "emptyDir"),
                f"/dev/shm volume {mount[1]} of {ps.name} is memory-backed with no sizeLimit: it can grow to the "
                "node's memory and counts against the container's memory limit (OOMKilled).",
                f"Set emptyDir.sizeLimit on volume {mount[1]} (e.g. {size}, below the memory limit).",
                patch=(SetValue((*ps.spec_path, "volumes", i, "emptyDir", "sizeLimit"), size),),
            )


def _from_node_shm(vol: dict[str, Any]) -> bool:
    host = vol.get("hostPath")
    path = as_str(host.get("path")) if isinstance(host, dict) else ""
    return path.rstrip("/") == SHM_PATH or path.startswith(SHM_PATH + "/")


@rule(
    id="shm-hostpath",
    severity="warning",
    category="distributed",
    summary="/dev/shm mounted from the node (hostPath): shared across pods and tenants, outside memory accounting.",
)
def shm_hostpath(ctx: LintContext) -> Iterator[Finding]:
    for ps in ctx.podsets:
        spec = pod_spec(ps)
        for i, vol in dict_items(spec.get("volumes")):
            if not _from_node_shm(vol):
                continue
            name = as_str(vol.get("name"))
            yield ctx.report(
                ctx.holder(ps),
                (*ps.spec_path, "volumes", i, "hostPath", "path"),
                f"{where(ps)} mounts the node's /dev/shm (hostPath volume {name}): every pod that does so shares one "
                "tmpfs with the others and with the node, its pages are charged to no pod's memory limit, and "
                "another tenant's segments (NCCL, DataLoader) are readable and can be overwritten.",
                f"Replace volume {name} with an emptyDir of medium: Memory and a sizeLimit (a private /dev/shm "
                "counted against the pod's memory limit).",
            )
