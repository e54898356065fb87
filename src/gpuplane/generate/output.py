"""Write a bundle to a folder: one file per object, a kustomization per stage, a README.

Deterministic on purpose (golden tests, reviewable diffs): keys sorted, files sorted, no
timestamps. Helm releases are written as kustomize ``HelmChartInflationGenerator`` objects
(``kustomize build --enable-helm``) so every YAML file in the output is a Kubernetes-style
object that ``gpuplane lint`` can read; the README gives the equivalent ``helm`` commands.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

import yaml

from gpuplane.generate.explain import decisions_markdown
from gpuplane.generate.render.base import STAGES, Bundle, HelmRelease


class _Dumper(yaml.CSafeDumper):
    """No ``&id001`` anchors: objects that share a dict (one annotations map on several pod
    templates) are written out in full, as people and ``kubectl`` expect."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _str(dumper: _Dumper, data: str) -> yaml.ScalarNode:
    """Multi-line strings (embedded configs, patches) as literal blocks, readable in review."""
    # The emitter falls back to a quoted style when a literal block cannot hold the text.
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|" if "\n" in data else None)


_Dumper.add_representer(str, _str)


def dump(obj: Any) -> str:
    return yaml.dump(obj, Dumper=_Dumper, sort_keys=True, default_flow_style=False, width=120)


def file_name(obj: dict[str, Any]) -> str:
    md = obj.get("metadata") or {}
    ns = md.get("namespace")
    stem = f"{obj['kind'].lower()}-{ns + '-' if ns else ''}{md.get('name')}"
    return stem + ".yaml"


def _generator(rel: HelmRelease) -> dict[str, Any]:
    gen: dict[str, Any] = {
        "apiVersion": "builtin",
        "kind": "HelmChartInflationGenerator",
        "metadata": {"name": rel.release},
        "name": rel.chart,
        "version": rel.version,
        "releaseName": rel.release,
        "namespace": rel.namespace,
        "includeCRDs": True,
        "valuesInline": rel.values,
    }
    if rel.repo.startswith("oci://"):
        gen["repo"] = f"{rel.repo}"
    else:
        gen["repo"] = rel.repo
    return gen


def helm_command(rel: HelmRelease, values_path: str) -> str:
    chart = f"{rel.repo}/{rel.chart}" if rel.repo.startswith("oci://") else f"{rel.release}-repo/{rel.chart}"
    pre = "" if rel.repo.startswith("oci://") else f"helm repo add {rel.release}-repo {rel.repo} && "
    return (
        f"{pre}helm upgrade --install {rel.release} {chart} --version {rel.version} --namespace {rel.namespace} "
        f"--create-namespace --values <(yq '.valuesInline' {values_path})"
    )


def _prerequisites(bundle: Bundle) -> list[str]:
    """What the user must provide that gpuplane never generates (Secrets, metrics adapters)."""
    from gpuplane.generate.render.workloads import HF_TOKEN_SECRET  # deferred for start-up time
    from gpuplane.generate.sizing import is_gated

    bp = bundle.blueprint
    out: list[str] = []
    gated = sorted({(w.tenant, w.model) for w in bp.workloads.inference if is_gated(w.model)})
    if gated:
        out += [
            "",
            "## Secrets you create",
            "",
            "gpuplane never writes Secrets. Gated Hugging Face models need an access token (accept the model's "
            "licence on huggingface.co first); the serving pods read it as `HF_TOKEN`:",
            "",
        ]
        for ns in sorted({t for t, _ in gated}):
            models = ", ".join(m for t, m in gated if t == ns)
            out.append(
                f"- `kubectl -n {ns} create secret generic {HF_TOKEN_SECRET} --from-literal=token=hf_...` "
                f"({models})"
            )
    if any(w.scale_metric == "queue" for w in bp.workloads.inference):
        out += [
            "",
            "## Metrics for the HPA",
            "",
            "vLLM exports `vllm:num_requests_waiting`; the HPAs scale on the custom metric "
            "`vllm_num_requests_waiting`. Custom metric names are API path segments, so the Prometheus adapter "
            "renames the series (prometheus-adapter config, `rules[].name`):",
            "",
            "```yaml",
            "rules:",
            '  - seriesQuery: \'vllm:num_requests_waiting{namespace!="",pod!=""}\'',
            "    resources: {overrides: {namespace: {resource: namespace}, pod: {resource: pod}}}",
            '    name: {matches: "^vllm:(.*)$", as: "vllm_${1}"}',
            "    metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)'",
            "```",
        ]
    return out


def _readme(bundle: Bundle, written: dict[str, list[str]]) -> str:
    bp = bundle.blueprint
    lines = [
        f"# {bp.name}: generated GPU platform configuration",
        "",
        f"Provider {bp.provider}, Kubernetes {bp.kubernetes_version}, scheduler {bp.scheduler.name}, "
        f"autoscaling {bp.autoscaling.provisioner}. Generated by `gpuplane generate`; do not edit by hand, "
        "change the blueprint and regenerate.",
        "",
        "## Apply order",
        "",
    ]
    step = 1
    for key, title in STAGES.items():
        stage = bundle.stages[key]
        manifests = bundle.shared.get("manifests", [])
        if key == "10-operators" and (bundle.releases or bundle.shared.get("crd_urls") or manifests):
            lines.append(f"{step}. `{key}/` {title}:")
            for rel in sorted(bundle.releases, key=lambda r: (r.order, r.release)):
                lines.append(f"   - `{helm_command(rel, f'{key}/helm-{rel.release}.yaml')}`")
                lines.append(f"     (chart {rel.chart} {rel.version}; source: {rel.source})")
            for url in bundle.shared.get("crd_urls", []):
                lines.append(f"   - `kubectl apply --server-side -f {url}`")
            for m in manifests:
                flag = "-k" if m.kustomize else "-f"
                lines.append(
                    f'   - `kubectl apply --server-side {flag} "{m.ref}"` ({m.name} {m.version}; source: {m.source})'
                )
            for patch in bundle.shared.get("kustomize_patches", []):
                t = patch["target"]
                flag = patch["patch"].rsplit("value: ", 1)[1].strip()
                lines.append(
                    f"     then add `{flag}` to deployment `{t['name']}` in namespace `{t['namespace']}` "
                    f"(the kustomization patches it)"
                )
            lines.append(
                f"   - or all at once: `kustomize build --enable-helm {key} | kubectl apply --server-side -f -`"
            )
            lines.append(
                "   - wait: `kubectl -n gpu-operator wait --for=condition=Ready pods --all --timeout=15m`"
            )
            step += 1
        elif written.get(key):
            lines.append(f"{step}. `kubectl apply -k {key}/` ({title})")
            step += 1
        elif stage.notes:
            lines.append(f"{step}. {title} (outside Kubernetes, no manifests):")
            step += 1
        for note in stage.notes:
            lines.append(f"   - {note}")
    lines += _prerequisites(bundle)
    lines += [
        "",
        "Check before applying: `gpuplane lint .` (clean at warning and above).",
        "",
        "## Design decisions",
        "",
        decisions_markdown(bundle.decisions),
        "",
    ]
    return "\n".join(lines)


# What generate wrote into a folder, one relative path a line, so the next run removes only that.
# Plain text, not YAML/JSON: `gpuplane lint OUT/` walks *.yaml, *.yml and *.json.
MANIFEST_NAME = ".gpuplane-generated"
_MANIFEST_HEADER = "# written by gpuplane generate: the files below are replaced by the next run"


class OutputRefused(OSError):
    """``-o DIR`` cannot be written safely; the message says why (one line)."""


def _previous_manifest(root: Path) -> list[str] | None:
    """The files an earlier ``generate`` wrote into ``root`` (its manifest), or None."""
    path = root / MANIFEST_NAME
    if path.is_symlink() or not path.is_file():
        return None
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    if not lines or lines[0] != _MANIFEST_HEADER:
        return None
    return [line for line in lines[1:] if line.strip()]


def _inside(root: Path, rel: str) -> Path | None:
    """``root/rel`` when every step below ``root`` is a plain folder or file (no symlink, no ``..``)."""
    parts = Path(rel).parts
    if not parts or Path(rel).is_absolute() or ".." in parts:
        return None
    here = root
    for part in parts:
        here = here / part
        if here.is_symlink():
            return None
    return here


def _prepare(root: Path, force: bool) -> None:
    """Make ``root`` ready: created when missing; else refused when it is a symlink, not a folder,
    or non-empty without a manifest of ours (unless ``force``); the files an earlier run wrote
    (and only those) are removed, with the stage folders they leave empty."""
    if root.is_symlink():
        raise OutputRefused(f"{root}: is a symlink; generate does not write through symlinks")
    if not root.exists():
        try:
            root.mkdir(parents=True)
        except OSError as exc:
            raise OutputRefused(f"{root}: cannot create: {exc.strerror or exc}") from None
        return
    if not root.is_dir():
        raise OutputRefused(f"{root}: not a folder")
    previous = _previous_manifest(root)
    try:
        empty = next(root.iterdir(), None) is None
    except OSError as exc:
        raise OutputRefused(f"{root}: cannot read: {exc.strerror or exc}") from None
    if previous is None and not empty and not force:
        raise OutputRefused(
            f"{root}: not empty and not written by gpuplane generate (no {MANIFEST_NAME}); "
            "choose an empty or new folder, or pass --force to write into it"
        )
    folders: set[Path] = set()
    for rel in previous or ():
        path = _inside(root, rel)
        if path is not None and path.is_file():
            path.unlink()
            folders.update(p for p in path.parents if p != root and root in p.parents)
    for folder in sorted(folders, key=lambda p: len(p.parts), reverse=True):
        with contextlib.suppress(OSError):  # only when empty: a user's file in a stage folder stays
            folder.rmdir()


def _write(root: Path, rel: str, text: str) -> None:
    """Create ``root/rel``, never following a symlink on the way (``O_NOFOLLOW`` on the file)."""
    path = _inside(root, rel)
    if path is None:
        raise OutputRefused(f"{root / rel}: a symlink on the way; not written")
    for folder in reversed(path.parents):
        if folder == root or root not in folder.parents:
            continue
        if folder.is_symlink():
            raise OutputRefused(f"{folder}: is a symlink; not written")
        if not folder.exists():
            folder.mkdir()
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as exc:
        raise OutputRefused(f"{path}: cannot write: {exc.strerror or exc}") from None
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)


def bundle_files(bundle: Bundle) -> dict[str, str]:
    """Every file of the bundle, relative path -> text, in write order (README.md last)."""
    out: dict[str, str] = {}
    written: dict[str, list[str]] = {}
    for key, stage in bundle.stages.items():
        files: dict[str, str] = {}
        for obj in stage.objects:
            files[file_name(obj)] = dump(obj)
        resources = sorted(files)
        generators: list[str] = []
        if key == "10-operators":
            for rel in bundle.releases:
                name = f"helm-{rel.release}.yaml"
                files[name] = dump(_generator(rel))
                generators.append(name)
        for obj in stage.reference:
            files[f"reference/{file_name(obj)}"] = dump(obj)
        if not files:
            continue
        kust: dict[str, Any] = {"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization"}
        if resources:
            kust["resources"] = resources
        if key == "10-operators":
            remote = [
                *bundle.shared.get("crd_urls", []),
                *(m.ref for m in bundle.shared.get("manifests", [])),
            ]
            if remote:
                kust["resources"] = [*kust.get("resources", []), *remote]
            if bundle.shared.get("kustomize_patches"):
                kust["patches"] = bundle.shared["kustomize_patches"]
        if generators:
            kust["generators"] = sorted(generators)
        files["kustomization.yaml"] = dump(kust)
        for name, text in sorted(files.items()):
            out[f"{key}/{name}"] = text
        written[key] = resources + generators
    out["README.md"] = _readme(bundle, written)
    return out


def write_bundle(bundle: Bundle, out: str | Path, *, force: bool = False) -> list[str]:
    """Write everything under ``out``; return the relative paths written.

    ``out`` is created when missing. An existing folder must be empty or hold an earlier
    generate's output (its ``.gpuplane-generated`` manifest), unless ``force``: then only the
    files that earlier run wrote are removed first (never a file it did not write), and no
    write follows a symlink. Raises :class:`OutputRefused` with one line otherwise.
    """
    root = Path(out)
    _prepare(root, force)
    paths: list[str] = []
    for rel, text in bundle_files(bundle).items():
        _write(root, rel, text)
        paths.append(rel)
    _write(root, MANIFEST_NAME, "\n".join([_MANIFEST_HEADER, *paths, MANIFEST_NAME]) + "\n")
    return paths
