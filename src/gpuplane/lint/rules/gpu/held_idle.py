"""Containers that hold GPUs while doing nothing (sleep, pause, tail -f /dev/null)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from gpuplane.lazy_pattern import LazyPattern
from gpuplane.lint.context import pod_spec
from gpuplane.lint.finding import Finding
from gpuplane.lint.rules._common import as_list, as_str, where
from gpuplane.ruleset import rule

if TYPE_CHECKING:
    from gpuplane.lint.context import LintContext

# The pause image (registry.k8s.io/pause, k8s.gcr.io/pause, gcr.io/google_containers/pause-amd64 ...):
# its only process blocks forever (kubernetes/kubernetes build/pause/linux/pause.c).
_PAUSE_IMAGE = LazyPattern(r"(?:^|/)pause(?:-[a-z0-9]+)?(?::|@|$)")
_SHELLS = frozenset({"sh", "bash", "ash", "dash", "zsh"})
# A whole command line that only waits: sleep (any duration), tail -f /dev/null, pause, or a
# `while true; do sleep N; done` loop.
_IDLE = LazyPattern(
    r"(?:exec\s+)?(?:sleep\s+(?:infinity|inf|\d+(?:\.\d+)?[smhd]?)|tail\s+-f\s+/dev/null|/?pause|"
    r"while\s+(?:true|:)\s*;?\s*do\s+sleep\s+\S+\s*;?\s*done)\s*;?"
)


def _command_line(container: dict[str, Any]) -> str | None:
    """command + args as one line, with a leading ``sh -c`` wrapper removed; None when unset."""
    words = [str(w) for w in (*as_list(container.get("command")), *as_list(container.get("args")))]
    if not words:
        return None
    if len(words) >= 2 and words[0].rsplit("/", 1)[-1] in _SHELLS and words[1] in ("-c", "-lc", "-ec"):
        words = words[2:]
    return " ".join(" ".join(words).split())


def idle_reason(container: dict[str, Any]) -> str | None:
    """What makes the container idle (its command, or the pause image), None when it works."""
    line = _command_line(container)
    if line is not None:
        return f"runs `{line}`" if _IDLE.fullmatch(line) else None
    image = as_str(container.get("image"))
    return f"runs the pause image {image}" if _PAUSE_IMAGE.search(image) else None


def _deadline(ctx: LintContext, ps: Any) -> bool:
    """The pod or its Job ends on its own (activeDeadlineSeconds)."""
    if isinstance(pod_spec(ps).get("activeDeadlineSeconds"), int):
        return True
    src = ps.source
    return src.kind == "Job" and isinstance(src.get("spec", "activeDeadlineSeconds"), int)


@rule(
    id="gpu-held-idle",
    severity="warning",
    category="gpu",
    summary="container holds GPUs but only sleeps / pauses (tail -f /dev/null, pause image) with no deadline",
)
def gpu_held_idle(ctx: LintContext) -> Iterator[Finding]:
    for ps in ctx.gpu_podsets():
        if _deadline(ctx, ps):
            continue
        for c in ctx.containers(ps, ("containers",)):
            gpus = c.gpu_requests()
            if not gpus:
                continue
            reason = idle_reason(c.data)
            if reason is None:
                continue
            held = ", ".join(f"{n}: {v}" for n, v in sorted(gpus.items()))
            yield ctx.report(
                ps.source,
                (*c.path, "resources"),
                f"{where(ps, c)} holds {held} and {reason}: the GPUs are allocated to a process that never "
                f"uses them, for as long as the pod lives ({ps.count} pod(s)), and no deadline ends it.",
                "Drop the GPU request (to force placement on GPU nodes use a nodeSelector or affinity), or give "
                "the pod an activeDeadlineSeconds and run the real workload.",
            )
