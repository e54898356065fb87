"""Model caches on unbounded node-local ephemeral storage."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from gpuplane.lazy_pattern import LazyPattern
from gpuplane.lint.finding import Finding
from gpuplane.lint.rules._common import as_list, as_str, dict_items, where
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


# Where a model server is told which model to load: vLLM/SGLang (`--model`, `vllm serve <id>`,
# `--model-path`), TGI (`--model-id`), Transformers scripts (`--model_name_or_path`) and env.
_MODEL_FLAGS = ("--model", "--model-id", "--model_id", "--model-path", "--model_path", "--model_name_or_path")
_MODEL_ENV = ("MODEL_ID", "HF_MODEL_ID", "MODEL_NAME", "MODEL", "MODEL_PATH")
# A Hugging Face Hub id: <org>/<name> (no scheme, not a path).
_HUB_ID = LazyPattern(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
# Where the Hub client stores downloads unless told otherwise (huggingface_hub constants.py:
# HF_HOME defaults to ~/.cache/huggingface; containers run as root unless set otherwise).
_DEFAULT_HF_HOME = "/root/.cache/huggingface"
# TGI's images set HF_HOME=/data (huggingface/text-generation-inference Dockerfile).
_TGI_HF_HOME = "/data"
_CACHE_DIR_ENV = ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "TRANSFORMERS_CACHE", "HF_HOME")


def _model_ref(container: dict[str, Any]) -> str | None:
    """The model the container is told to load (a Hub id or a path), from args or env."""
    words = [str(w) for w in (*as_list(container.get("command")), *as_list(container.get("args")))]
    tokens = [t for w in words for t in w.split()]
    for i, token in enumerate(tokens):
        flag, _, inline = token.partition("=")
        if flag in _MODEL_FLAGS:
            value = inline or (tokens[i + 1] if i + 1 < len(tokens) else "")
            if value and not value.startswith("-"):
                return value.strip("\"'")
        after = tokens[i + 1] if i + 1 < len(tokens) else "-"
        if token == "serve" and i > 0 and tokens[i - 1].endswith("vllm") and not after.startswith("-"):
            return after.strip("\"'")
    for _i, env in dict_items(container.get("env")):
        if as_str(env.get("name")) in _MODEL_ENV and isinstance(env.get("value"), str) and env["value"]:
            return str(env["value"])
    return None


def _download_dir(container: dict[str, Any]) -> str:
    words = [str(w) for w in (*as_list(container.get("command")), *as_list(container.get("args")))]
    tokens = [t for w in words for t in w.split()]
    for i, token in enumerate(tokens):
        flag, _, inline = token.partition("=")
        if flag in ("--download-dir", "--download_dir", "--huggingface-hub-cache"):
            value = inline or (tokens[i + 1] if i + 1 < len(tokens) else "")
            if value.startswith("/"):
                return value.rstrip("/")
    env = {as_str(e.get("name")): e.get("value") for _i, e in dict_items(container.get("env"))}
    for name in _CACHE_DIR_ENV:
        found = env.get(name)
        if isinstance(found, str) and found.startswith("/"):
            return found.rstrip("/")
    if "text-generation-inference" in as_str(container.get("image")):
        return _TGI_HF_HOME
    return _DEFAULT_HF_HOME


def _mount_of(container: dict[str, Any], path: str) -> str | None:
    """The volume name mounted at (or above) ``path`` in the container, deepest mount first."""
    best: tuple[int, str] | None = None
    for _j, m in _mounts(container):
        mount_path = m.get("mountPath")
        if isinstance(mount_path, str) and _under(path, mount_path):
            depth = len(mount_path.rstrip("/"))
            if best is None or depth > best[0]:
                best = (depth, str(m.get("name")))
    return best[1] if best else None


def _has_ephemeral_storage(container: dict[str, Any]) -> bool:
    res = container.get("resources")
    if not isinstance(res, dict):
        return False
    return any(isinstance(res.get(k), dict) and "ephemeral-storage" in res[k] for k in ("requests", "limits"))


def _under(path: str, mount: str) -> bool:
    mount = mount.rstrip("/") or "/"
    return path == mount or path.startswith(mount + "/")


def _writable_layer_downloads(ctx: LintContext, ps: Any) -> Iterator[Finding]:
    """A model server told to load a Hub model with no volume where the download lands and no
    ephemeral-storage request: the weights go into the container's writable layer (node disk,
    unaccounted until the kubelet evicts the pod)."""
    for c in ctx.containers(ps, ("containers",)):
        model = _model_ref(c.data)
        if not model or not _HUB_ID.match(model) or _has_ephemeral_storage(c.data):
            continue
        cache_dir = _download_dir(c.data)
        if _mount_of(c.data, cache_dir) is not None:
            continue  # a volume holds the cache: the emptyDir check below judges it
        yield ctx.report(
            ps.source,
            (*c.path, "name"),
            f"{where(ps, c)} downloads {model} into its own writable layer ({cache_dir}: no volume there) with no "
            "ephemeral-storage request: the weights fill the node's disk outside any accounting and the kubelet "
            'evicts pods ("The node was low on resource: ephemeral-storage").',
            f"Mount a PVC (or a sized emptyDir / generic ephemeral volume) at {cache_dir} and request "
            f"ephemeral-storage on container {c.name}, or load the model from a pre-populated volume.",
        )


@rule(
    id="model-cache-ephemeral-unbounded",
    severity="warning",
    category="storage",
    summary="Model or dataset downloaded into an emptyDir with no sizeLimit or ephemeral-storage request.",
)
def model_cache_ephemeral_unbounded(ctx: LintContext) -> Iterator[Finding]:
    for ps in ctx.gpu_podsets():
        yield from _writable_layer_downloads(ctx, ps)
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
        volume_kinds = {
            str(vol.get("name")): next(iter(vol.keys() - {"name"}), "") for _i, vol in _volumes(ps)
        }
        for c in ctx.containers(ps):
            if _has_ephemeral_storage(c.data):
                continue
            model = _model_ref(c.data)
            if model and model.startswith("/"):
                source = _mount_of(c.data, model)
                if source is None or volume_kinds.get(source) != "emptyDir":
                    continue  # the model comes from the image or a PVC / hostPath: emptyDirs hold small caches
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
