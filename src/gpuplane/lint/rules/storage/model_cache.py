"""Model caches on unbounded node-local ephemeral storage."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from gpuplane.lint.finding import Finding
from gpuplane.lint.rules._common import as_str, where
from gpuplane.lint.rules.storage._shared import _mounts, _spec_path, _tokens, _volumes
from gpuplane.ruleset import rule

if TYPE_CHECKING:
    from gpuplane.lint.context import LintContext

# Words in a mount path / volume / claim name that say "model or dataset download lands here".
CACHE_WORDS = frozenset(
    {
        "model",
        "models",
        "cache",
        "hf",
        "huggingface",
        "weights",
        "dataset",
        "datasets",
        "data",
        "checkpoint",
        "checkpoints",
        "ckpt",
        "hub",
        "llm",
        "vllm",
        "torch",
    }
)
# Environment variables that point framework downloads somewhere (Hugging Face, PyTorch, vLLM).
CACHE_ENV = frozenset(
    {
        "HF_HOME",
        "HF_HUB_CACHE",
        "HUGGINGFACE_HUB_CACHE",
        "TRANSFORMERS_CACHE",
        "HF_DATASETS_CACHE",
        "TORCH_HOME",
        "XDG_CACHE_HOME",
        "VLLM_CACHE_ROOT",
        "MODEL_DIR",
        "MODEL_PATH",
        "DATA_DIR",
    }
)


def _cache_env_paths(container: dict[str, Any]) -> list[str]:
    env = container.get("env")
    out: list[str] = []
    for item in env if isinstance(env, list) else ():
        if (
            isinstance(item, dict)
            and as_str(item.get("name")) in CACHE_ENV
            and isinstance(item.get("value"), str)
        ):
            out.append(item["value"].rstrip("/") or "/")
    return out


def _has_ephemeral_storage(container: dict[str, Any]) -> bool:
    res = container.get("resources")
    if not isinstance(res, dict):
        return False
    return any(isinstance(res.get(k), dict) and "ephemeral-storage" in res[k] for k in ("requests", "limits"))


def _under(path: str, mount: str) -> bool:
    mount = mount.rstrip("/") or "/"
    return path == mount or path.startswith(mount + "/")


@rule(
    id="model-cache-ephemeral-unbounded",
    severity="warning",
    category="storage",
    summary="Model or dataset downloaded into an emptyDir with no sizeLimit or ephemeral-storage request.",
)
def model_cache_ephemeral_unbounded(ctx: LintContext) -> Iterator[Finding]:
    for ps in ctx.gpu_podsets():
        unbounded: dict[str, int] = {}
        for i, vol in _volumes(ps):
            ed = vol.get("emptyDir")
            if "emptyDir" in vol and (ed is None or isinstance(ed, dict)):
                ed = ed or {}
                if ed.get("medium") != "Memory" and ed.get("sizeLimit") in (None, "", 0):
                    unbounded[str(vol.get("name"))] = i
        if not unbounded:
            continue
        done: set[str] = set()
        for c in ctx.containers(ps):
            if _has_ephemeral_storage(c.data):
                continue
            env_paths = _cache_env_paths(c.data)
            for _j, m in _mounts(c.data):
                name = str(m.get("name"))
                mount_path = m.get("mountPath")
                if name not in unbounded or name in done or not isinstance(mount_path, str):
                    continue
                via_env = any(_under(p, mount_path) for p in env_paths)
                if not via_env and not (_tokens(name, mount_path) & CACHE_WORDS):
                    continue
                done.add(name)
                yield ctx.report(
                    ps.source,
                    (*_spec_path(ps), "volumes", unbounded[name], "emptyDir"),
                    f"{where(ps, c)} downloads models/data into emptyDir {name} "
                    f"({mount_path}) with no sizeLimit and no ephemeral-storage request: large downloads fill the "
                    'node\'s disk and the kubelet evicts pods ("The node was low on resource: ephemeral-storage").',
                    f"Set emptyDir.sizeLimit on volume {name} and a matching resources.requests.ephemeral-storage "
                    f"on container {c.name}, or put the cache on a PVC / generic ephemeral volume.",
                )
