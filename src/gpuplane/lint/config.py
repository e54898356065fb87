"""Lint configuration: ``.gpuplane.yaml`` (found upward from the cwd) plus CLI flags.

File format::

    disable: [gpu-type-unpinned]            # rule ids turned off
    enable: []                              # when non-empty: only these rules run
    severity:                               # per-rule severity overrides
      cpu-pod-on-gpu-nodes: error
    ignore:                                 # glob patterns of paths not linted
      - charts/vendor/**
    fail-on: warning                        # default for --fail-on
    profile: all                            # also run the opt-in rules (default: default)
    cluster:                                # facts about the target cluster when no --cluster
      admission-plugins: [ExtendedResourceToleration]   # the API server's --enable-admission-plugins
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass, field
from typing import Any

from gpuplane.lint.finding import SEVERITIES

CONFIG_NAMES = (".gpuplane.yaml", ".gpuplane.yml")
FAIL_ON = ("error", "warning", "info", "never")
PROFILES = ("default", "all")


class ConfigError(ValueError):
    """An unusable config file: reported as one line, exit 2."""


@dataclass(slots=True)
class LintConfig:
    disable: set[str] = field(default_factory=set)
    enable: set[str] = field(default_factory=set)
    severity: dict[str, str] = field(default_factory=dict)
    ignore: list[str] = field(default_factory=list)
    fail_on: str | None = None
    base_dir: str = "."
    source: str | None = None
    profile: str = "default"
    admission_plugins: frozenset[str] = frozenset()

    def rule_enabled(self, rule_id: str) -> bool:
        if rule_id in self.disable:
            return False
        return not self.enable or rule_id in self.enable

    def runs(self, rule_id: str, tier: str) -> bool:
        """Whether a rule of ``tier`` runs: not disabled; named in ``enable`` when that is set;
        otherwise default-tier rules always, opt-in ones with ``profile: all`` (``--enable-all``)."""
        if not self.rule_enabled(rule_id):
            return False
        return bool(self.enable) or tier == "default" or self.profile == "all"

    def path_ignored(self, path: str) -> bool:
        """True when ``path`` matches an ignore glob (relative to the config file's folder)."""
        if not self.ignore or not path or path.startswith("<"):
            return False
        rel = os.path.relpath(os.path.abspath(path), os.path.abspath(self.base_dir))
        candidates = (rel.replace(os.sep, "/"), path.replace(os.sep, "/"))
        for pattern in self.ignore:
            for candidate in candidates:
                if fnmatch.fnmatch(candidate, pattern) or fnmatch.fnmatch(
                    candidate, pattern.rstrip("/") + "/*"
                ):
                    return True
        return False


def find_config(start: str | None = None) -> str | None:
    """The nearest ``.gpuplane.yaml`` in ``start`` (default cwd) or any parent folder."""
    folder = os.path.realpath(start or os.getcwd())  # os.path, not pathlib: start-up time
    while True:
        for name in CONFIG_NAMES:
            candidate = os.path.join(folder, name)
            if os.path.isfile(candidate):
                return candidate
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def _id_list(value: Any, key: str, source: str) -> set[str]:
    if value is None:
        return set()
    if isinstance(value, str):
        return {v.strip() for v in value.split(",") if v.strip()}
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return {v.strip() for v in value if v.strip()}
    raise ConfigError(f"{source}: '{key}' must be a list of rule ids")


def load_config(path: str) -> LintConfig:
    """Parse one config file; raise :class:`ConfigError` with a one-line message."""
    from gpuplane.sources.side_input import SideInputError, read_document  # for start-up time

    try:
        data = read_document(path)
    except SideInputError as exc:
        raise ConfigError(str(exc)) from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping at top level")
    known = {
        "disable",
        "enable",
        "severity",
        "ignore",
        "ignore-paths",
        "ignore_paths",
        "fail-on",
        "fail_on",
        "profile",
        "cluster",
    }
    unknown = sorted(set(data) - known, key=str)
    if unknown and len(unknown) == len(data):
        # Nothing here is a config key: the file is something else (an .env file, a private key,
        # any YAML a path argument names, also over MCP). Its keys are not quoted back.
        raise ConfigError(
            f"{path}: not a gpuplane config: none of its {len(data)} top-level keys is one of disable, "
            "enable, severity, ignore, fail-on, profile, cluster"
        )
    if unknown:
        raise ConfigError(
            f"{path}: unknown key '{unknown[0]}' (known: disable, enable, severity, ignore, fail-on, "
            "profile, cluster)"
        )
    severity = data.get("severity") or {}
    if not isinstance(severity, dict):
        raise ConfigError(f"{path}: 'severity' must map rule ids to error|warning|info")
    for rule_id, level in severity.items():
        if level not in SEVERITIES:
            raise ConfigError(
                f"{path}: severity of {rule_id} must be one of error, warning, info (got {level!r})"
            )
    ignore = data.get("ignore", data.get("ignore-paths", data.get("ignore_paths"))) or []
    if isinstance(ignore, str):
        ignore = [ignore]
    if not isinstance(ignore, list) or not all(isinstance(p, str) for p in ignore):
        raise ConfigError(f"{path}: 'ignore' must be a list of path globs")
    fail_on = data.get("fail-on", data.get("fail_on"))
    if fail_on is not None and fail_on not in FAIL_ON:
        raise ConfigError(f"{path}: 'fail-on' must be one of {', '.join(FAIL_ON)}")
    profile = data.get("profile", "default")
    if profile not in PROFILES:
        raise ConfigError(f"{path}: 'profile' must be one of {', '.join(PROFILES)}")
    cluster = data.get("cluster") or {}
    if not isinstance(cluster, dict) or set(cluster) - {"admission-plugins"}:
        raise ConfigError(f"{path}: 'cluster' takes only 'admission-plugins' (a list of plugin names)")
    plugins = cluster.get("admission-plugins") or []
    if isinstance(plugins, str):
        plugins = [p.strip() for p in plugins.split(",") if p.strip()]
    if not isinstance(plugins, list) or not all(isinstance(p, str) for p in plugins):
        raise ConfigError(f"{path}: 'cluster.admission-plugins' must be a list of admission plugin names")
    return LintConfig(
        profile=profile,
        admission_plugins=frozenset(plugins),
        disable=_id_list(data.get("disable"), "disable", path),
        enable=_id_list(data.get("enable"), "enable", path),
        severity={str(k): str(v) for k, v in severity.items()},
        ignore=list(ignore),
        fail_on=fail_on,
        base_dir=os.path.dirname(os.path.realpath(path)),
        source=path,
    )
