"""Validate generated objects against the Kubernetes OpenAPI schema and upstream CRD schemas.

Built-in kinds: the strict (no unknown fields) JSON schemas kubernetes-validate bundles per
Kubernetes minor, compiled once per (version, kind) with jsonschema-rs (reference
python-stack.md §3: ~0.01 ms per object once compiled). CRD kinds: the ``openAPIV3Schema``
of each served version of the CRDs found under a directory (``--crds``); gpuplane ships no
CRDs. Unknown fields are errors there too: the schema is tightened to
``additionalProperties: false`` wherever it lists properties and does not preserve unknown
fields, as a strict server-side field validation would report them.
"""

from __future__ import annotations

import json
import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from gpuplane.generate.schema_files import schema_dir

CLIENT_SIDE_KINDS = {"Kustomization", "HelmChartInflationGenerator"}


def _schema_dir(version: str) -> Path:
    return Path(schema_dir(version))


@lru_cache(maxsize=8)
def _registry(version: str) -> Any:
    import jsonschema_rs  # deferred for start-up time

    defs = json.loads((_schema_dir(version) / "_definitions.json").read_text())
    return jsonschema_rs.Registry([(defs["$id"], defs)])


@lru_cache(maxsize=256)
def _core_validator(version: str, kind: str, api_version: str) -> Any:
    import jsonschema_rs  # deferred for start-up time

    group_version = api_version.split("/")
    if len(group_version) == 1:
        stem = f"{kind.lower()}-{group_version[0]}"
    else:
        stem = f"{kind.lower()}-{group_version[0].split('.')[0]}-{group_version[1]}"
    path = _schema_dir(version) / f"{stem}.json"
    if not path.is_file():
        return None
    schema = json.loads(path.read_text())
    return jsonschema_rs.validator_for(schema, registry=_registry(version))


def _tighten(schema: Any) -> Any:
    if isinstance(schema, dict):
        out = {k: _tighten(v) for k, v in schema.items() if k != "properties"}
        if "properties" in schema:
            out["properties"] = {k: _tighten(v) for k, v in schema["properties"].items()}
            if "additionalProperties" not in schema and not schema.get(
                "x-kubernetes-preserve-unknown-fields"
            ):
                out["additionalProperties"] = False
        return out
    if isinstance(schema, list):
        return [_tighten(x) for x in schema]
    return schema


class CrdSchemas:
    """``(apiVersion, kind) -> validator`` from the CRDs found under a folder, built lazily.

    A CRD folder can hold megabytes of schemas (the upstream corpus: 14 MB in 29 files) while a
    bundle uses a handful of custom kinds. So the constructor only lists the files; asking for
    a kind reads just the files whose text can define it (a CRD spells ``kind: <Kind>`` under
    ``spec.names``), parses them once, and compiles one validator per kind actually generated.
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.files: list[Path] = []
        for dirpath, dirs, files in os.walk(root):
            dirs.sort()
            self.files.extend(
                Path(dirpath) / name for name in sorted(files) if name.endswith((".yaml", ".yml"))
            )
        self._texts: dict[Path, bytes | None] = {}
        self._parsed: set[Path] = set()
        self._schemas: dict[tuple[str, str], dict[str, Any]] = {}
        self._validators: dict[tuple[str, str], Any] = {}

    def _text(self, path: Path) -> bytes | None:
        if path not in self._texts:
            try:
                self._texts[path] = path.read_bytes()
            except OSError:
                self._texts[path] = None
        return self._texts[path]

    def schema(self, api_version: str, kind: str) -> dict[str, Any] | None:
        """The ``openAPIV3Schema`` (without ``status``) of ``kind`` at ``api_version``, if a CRD serves it."""
        key = (api_version, kind)
        if key not in self._schemas:
            spelled = re.compile(
                rb"^[ \t]*kind:[ \t]*[\"']?" + re.escape(kind.encode()) + rb"[\"']?[ \t]*$", re.MULTILINE
            )
            for path in self.files:
                if path in self._parsed:
                    continue
                text = self._text(path)
                if text is not None and spelled.search(text):
                    self._parse(path, text)
                    if key in self._schemas:
                        break
        return self._schemas.get(key)

    def _parse(self, path: Path, text: bytes) -> None:
        self._parsed.add(path)
        self._texts.pop(path, None)  # parsed once; the raw text is no longer needed
        try:
            docs = list(yaml.load_all(text, Loader=yaml.CSafeLoader))
        except yaml.YAMLError:
            return
        for doc in docs:
            if not isinstance(doc, dict) or doc.get("kind") != "CustomResourceDefinition":
                continue
            spec = doc.get("spec") or {}
            kind = (spec.get("names") or {}).get("kind")
            for v in spec.get("versions") or []:
                schema = (v.get("schema") or {}).get("openAPIV3Schema")
                if kind and isinstance(schema, dict):
                    # Status is written by the controller, never by a generated manifest: drop it
                    # (a shallow copy: the parsed document is private to this object).
                    props = {k: p for k, p in (schema.get("properties") or {}).items() if k != "status"}
                    self._schemas.setdefault(
                        (f"{spec['group']}/{v['name']}", kind), {**schema, "properties": props}
                    )

    def validator(self, api_version: str, kind: str) -> Any:
        key = (api_version, kind)
        if key not in self._validators:
            import jsonschema_rs  # deferred for start-up time

            schema = self.schema(api_version, kind)
            self._validators[key] = (
                jsonschema_rs.Draft4Validator(_tighten(schema)) if schema is not None else None
            )
        return self._validators[key]


def _path(parts: Any) -> str:
    return ".".join(str(p) for p in parts) or "(object)"


def validate_objects(
    objects: list[dict[str, Any]], version: str, crds: CrdSchemas | None = None
) -> tuple[list[str], list[str]]:
    """Errors (``Kind ns/name: path: message``) and the kinds that could not be checked."""
    errors: list[str] = []
    unchecked: set[str] = set()
    for obj in objects:
        kind, api = obj.get("kind", ""), obj.get("apiVersion", "")
        if kind in CLIENT_SIDE_KINDS:
            continue
        md = obj.get("metadata") or {}
        namespace = md.get("namespace")
        ref = f"{kind} {namespace + '/' if namespace else ''}{md.get('name')}"
        v = _core_validator(version, kind, api)
        if v is None and crds is not None:
            v = crds.validator(api, kind)
        if v is None:
            unchecked.add(f"{api}/{kind}")
            continue
        for err in v.iter_errors(obj):
            errors.append(f"{ref}: {_path(err.instance_path)}: {err.message}")
    return errors, sorted(unchecked)
