"""GPU Operator ClusterPolicy (``nvidia.com/v1``) and the operator chart's values, reduced to
the settings engines reason about.

Defaults are the operator's, not guesses:

- Component switches: ``api/nvidia/v1/clusterpolicy_types.go`` ``IsEnabled()`` -- driver,
  toolkit, devicePlugin, dcgmExporter, gfd and migManager default to enabled when
  ``enabled`` is unset.
- ``spec.mig.strategy`` has no CRD default (``nvidia.com_clusterpolicies.yaml``: enum
  none/single/mixed); with it empty the operator sets no ``MIG_STRATEGY`` on the device
  plugin, whose own default is ``none`` (``controllers/object_controls.go``
  ``applyMIGConfiguration``: "if not set then let plugin decide this per node(default: none)").
- ``spec.devicePlugin.config`` is only used when ``name`` is set (``isCustomPluginConfigSet``).
- Chart values (``deployments/gpu-operator/values.yaml``): ``mig.strategy: single`` and every
  component above enabled (reference nvidia-gpu-stack.md §3.2).

Schema checks follow the CRD: required spec fields (``daemonsets``, ``dcgm``,
``dcgmExporter``, ``devicePlugin``, ``driver``, ``gfd``, ``nodeStatusExporter``,
``operator``, ``toolkit``) and enums, with the API server's wording (``Required value``,
``Unsupported value``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpuplane.gpu.problems import WARNING, ConfigProblem

MIG_STRATEGIES = ("none", "single", "mixed")
REQUIRED_SPEC_FIELDS = (
    "daemonsets",
    "dcgm",
    "dcgmExporter",
    "devicePlugin",
    "driver",
    "gfd",
    "nodeStatusExporter",
    "operator",
    "toolkit",
)
MIG_MANAGER_DEFAULT_CONFIGS = ("all-disabled", "")
CHART_MIG_STRATEGY = "single"


@dataclass(slots=True)
class ClusterPolicyView:
    """What the operator will deploy and how MIG and sharing are configured."""

    mig_strategy: str = "none"
    mig_manager_enabled: bool = True
    device_plugin_config: tuple[str, str] | None = None
    dcgm_exporter_enabled: bool = True
    driver_enabled: bool = True
    toolkit_enabled: bool = True
    gfd_enabled: bool = True
    operator_namespace: str | None = None
    device_plugin_enabled: bool = True
    mig_manager_config: tuple[str, str] = ("default-mig-parted-config", "all-disabled")
    cdi_enabled: bool = True


def _section(spec: dict[str, Any], key: str) -> dict[str, Any]:
    value = spec.get(key)
    return value if isinstance(value, dict) else {}


def _enabled(section: dict[str, Any], default: bool) -> bool:
    value = section.get("enabled")
    return value if isinstance(value, bool) else default


def _unsupported(path: str, value: Any, allowed: tuple[str, ...]) -> str:
    supported = ", ".join(f'"{a}"' for a in allowed)
    return f'{path}: Unsupported value: "{value}": supported values: {supported}'


def _fill(view: ClusterPolicyView, spec: dict[str, Any], default_strategy: str) -> list[ConfigProblem]:
    problems: list[ConfigProblem] = []
    mig = _section(spec, "mig")
    strategy = mig.get("strategy")
    if strategy in (None, ""):
        view.mig_strategy = default_strategy
    elif strategy in MIG_STRATEGIES:
        view.mig_strategy = strategy
    else:
        problems.append(
            ConfigProblem(
                _unsupported("spec.mig.strategy", strategy, MIG_STRATEGIES), ("spec", "mig", "strategy")
            )
        )
        view.mig_strategy = default_strategy
    mig_manager = _section(spec, "migManager")
    view.mig_manager_enabled = _enabled(mig_manager, True)
    mm_config = _section(mig_manager, "config")
    mm_default = mm_config.get("default", "all-disabled")
    if mm_default not in MIG_MANAGER_DEFAULT_CONFIGS:
        problems.append(
            ConfigProblem(
                _unsupported("spec.migManager.config.default", mm_default, MIG_MANAGER_DEFAULT_CONFIGS),
                ("spec", "migManager", "config", "default"),
            )
        )
    view.mig_manager_config = (mm_config.get("name") or "default-mig-parted-config", mm_default or "")
    device_plugin = _section(spec, "devicePlugin")
    view.device_plugin_enabled = _enabled(device_plugin, True)
    dp_config = _section(device_plugin, "config")
    if dp_config.get("name"):
        view.device_plugin_config = (str(dp_config["name"]), str(dp_config.get("default") or ""))
    elif dp_config.get("default"):
        problems.append(
            ConfigProblem(
                "devicePlugin.config.default is ignored without devicePlugin.config.name: the operator only mounts "
                "a device-plugin ConfigMap when its name is set",
                ("spec", "devicePlugin", "config", "default"),
                WARNING,
            )
        )
    view.dcgm_exporter_enabled = _enabled(_section(spec, "dcgmExporter"), True)
    view.driver_enabled = _enabled(_section(spec, "driver"), True)
    view.toolkit_enabled = _enabled(_section(spec, "toolkit"), True)
    view.gfd_enabled = _enabled(_section(spec, "gfd"), True)
    view.cdi_enabled = _enabled(_section(spec, "cdi"), True)
    if view.mig_strategy != "none" and not view.mig_manager_enabled:
        problems.append(
            ConfigProblem(
                f"mig.strategy is {view.mig_strategy} but migManager is disabled: MIG layouts must then be "
                "created on the hosts by other means",
                ("spec", "migManager", "enabled"),
                WARNING,
            )
        )
    return problems


def parse_clusterpolicy(spec: dict) -> tuple[ClusterPolicyView, list[ConfigProblem]]:
    """Read a ClusterPolicy ``spec`` (or the whole object) into a view plus schema problems."""
    obj_spec: dict[str, Any] = (
        _section(spec, "spec") if isinstance(spec.get("spec"), dict) and "kind" in spec else spec
    )
    view = ClusterPolicyView()
    problems: list[ConfigProblem] = []
    for key in REQUIRED_SPEC_FIELDS:
        if key not in obj_spec:
            problems.append(ConfigProblem(f"spec.{key}: Required value", ("spec", key)))
    problems.extend(_fill(view, obj_spec, "none"))
    return view, problems


def parse_operator_helm_values(values: dict, namespace: str | None = None) -> ClusterPolicyView:
    """Read gpu-operator chart values (the ``values.yaml`` shape) into the same view.

    Unset keys take the chart defaults; ``namespace`` is the release namespace if known.
    """
    view = ClusterPolicyView(operator_namespace=namespace)
    _fill(view, values or {}, CHART_MIG_STRATEGY)
    return view
