"""Ray heads that hold GPUs Ray is told not to use."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from gpuplane.lazy_pattern import LazyPattern
from gpuplane.lint.finding import Finding
from gpuplane.lint.rules._common import as_dict, as_list, where
from gpuplane.ruleset import rule
from gpuplane.sources.manifest import FieldPath

if TYPE_CHECKING:
    from gpuplane.lint.context import LintContext

# `ray start ... --num-gpus=0` / `--num-gpus 0` in the head container's own command.
_RAY_START_NO_GPUS = LazyPattern(r"\bray\s+start\b[^;&|\n]*?--num-gpus(?:=|\s+)[\"']?0+[\"']?(?![0-9.])")


def _zero(value: Any) -> bool:
    """``"0"`` or ``0`` as KubeRay passes it on to ``ray start`` (a string map; 0 written unquoted)."""
    return (
        isinstance(value, (str, int)) and not isinstance(value, bool) and str(value).strip() in ("0", "0.0")
    )


def _told_no_gpus(head: dict[str, Any], container: dict[str, Any]) -> tuple[FieldPath, str] | None:
    """Where Ray is told the head has no GPUs (relative to ``headGroupSpec``), as written."""
    params = as_dict(head.get("rayStartParams"))
    if "num-gpus" in params and _zero(params["num-gpus"]):
        return ("rayStartParams", "num-gpus"), f'rayStartParams num-gpus: "{params["num-gpus"]}"'
    # headGroupSpec.resources: Ray resources that override rayStartParams (KubeRay v1.4+)
    resources = as_dict(head.get("resources"))
    if "GPU" in resources and _zero(resources["GPU"]):
        return ("resources", "GPU"), f'resources GPU: "{resources["GPU"]}"'
    for section in ("command", "args"):
        for i, word in enumerate(as_list(container.get(section))):
            if isinstance(word, str) and _RAY_START_NO_GPUS.search(word):
                return ("template", "spec", "containers", 0, section, i), "ray start --num-gpus=0"
    words = " ".join(str(w) for w in (*as_list(container.get("command")), *as_list(container.get("args"))))
    if _RAY_START_NO_GPUS.search(words):
        return ("template", "spec", "containers", 0, "command"), "ray start --num-gpus=0"
    return None


@rule(
    id="ray-head-gpu",
    severity="warning",
    category="distributed",
    summary="Ray head (headGroupSpec) requests GPUs while Ray is told to use none there (num-gpus: 0): "
    "the GPUs are held idle",
)
def ray_head_gpu(ctx: LintContext) -> Iterator[Finding]:
    for ps in ctx.gpu_podsets():
        path = tuple(ps.template_path)
        if ps.role != "head" or len(path) < 2 or path[-2:] != ("headGroupSpec", "template"):
            continue
        holder = ctx.holder(ps)
        head = holder.get(*path[:-1])
        if not isinstance(head, dict):
            continue
        # the Ray container is the first one of the head pod (KubeRay utils.RayContainerIndex)
        ray = next(iter(ctx.containers(ps, ("containers",))), None)
        if ray is None or ray.index != 0:
            continue
        gpus = ray.gpu_requests()
        if not gpus:
            continue
        told = _told_no_gpus(head, ray.data)
        if told is None:
            continue
        where_told, text = told
        held = ", ".join(f"{n}: {v}" for n, v in sorted(gpus.items()))
        yield ctx.report(
            holder,
            (*path[:-1], *where_told),
            f"{where(ps, ray)} holds {held}, but {text} tells Ray the head has no GPUs: Ray places no GPU "
            "task or actor there, so the head's GPUs are allocated and idle for as long as the cluster runs.",
            "drop the GPU request from the head and run GPU work on a worker group (keep num-gpus: 0 so the "
            "head only schedules), or remove num-gpus: 0 if GPU tasks should run on the head.",
        )
