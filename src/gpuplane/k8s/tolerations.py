"""Taints and tolerations, matched the way the API helpers and kube-scheduler match them.

Sources (kubernetes/kubernetes):

* ``staging/src/k8s.io/api/core/v1/toleration.go`` ``Toleration.ToleratesTaint``: an empty
  effect matches every effect; a non-empty key must equal the taint's key (an empty key
  with ``Exists`` tolerates everything); ``""``/``Equal`` compares values, ``Exists``
  ignores them; ``Lt``/``Gt`` compare the values as int64 (``taint < toleration`` /
  ``taint > toleration``) and fail closed when either side is not an integer; any other
  operator tolerates nothing. The numeric operators come from KEP-5471 (feature gate
  ``TaintTolerationComparisonOperators``, alpha in v1.35): the API server only admits them
  with the gate on, the matcher itself applies them unconditionally.
* ``staging/src/k8s.io/component-helpers/scheduling/corev1/helpers.go``
  ``TolerationsTolerateTaint`` / ``FindMatchingUntoleratedTaint``.
* ``pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go``: Filter looks only
  at ``NoSchedule`` and ``NoExecute`` taints; Score counts the ``PreferNoSchedule`` taints
  not tolerated by the pod's tolerations whose effect is empty or ``PreferNoSchedule``.

Typed structs (:mod:`gpuplane.k8s.objects`) and manifest dicts are both accepted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeVar

from gpuplane.k8s.objects import Taint, Toleration
from gpuplane.k8s.selectors import parse_go_int64

__all__ = [
    "FILTER_EFFECTS",
    "count_intolerable_prefer_no_schedule",
    "find_untolerated_taint",
    "tolerates",
    "tolerations_tolerate_taint",
]

NO_SCHEDULE = "NoSchedule"
PREFER_NO_SCHEDULE = "PreferNoSchedule"
NO_EXECUTE = "NoExecute"
# The effects TaintToleration's Filter considers.
FILTER_EFFECTS: tuple[str, ...] = (NO_SCHEDULE, NO_EXECUTE)

T = TypeVar("T")


def _toleration_parts(t: Any) -> tuple[str, str, str, str]:
    if isinstance(t, Toleration):
        return t.key, t.operator, t.value, t.effect
    if isinstance(t, Mapping):
        return (t.get("key") or "", t.get("operator") or "", t.get("value") or "", t.get("effect") or "")
    return t.key, t.operator, t.value, t.effect


def _taint_parts(t: Any) -> tuple[str, str, str]:
    if isinstance(t, Taint):
        return t.key, t.value, t.effect
    if isinstance(t, Mapping):
        return t.get("key") or "", t.get("value") or "", t.get("effect") or ""
    return t.key, t.value, t.effect


def _tolerates(t_key: str, t_op: str, t_value: str, t_effect: str, key: str, value: str, effect: str) -> bool:
    if t_effect and t_effect != effect:
        return False
    if t_key and t_key != key:
        return False
    if t_op == "" or t_op == "Equal":
        return t_value == value
    if t_op == "Exists":
        return True
    if t_op == "Lt" or t_op == "Gt":
        bound = parse_go_int64(t_value)
        actual = parse_go_int64(value)
        if bound is None or actual is None:
            return False
        return actual < bound if t_op == "Lt" else actual > bound
    return False


def tolerates(toleration: Toleration | Mapping[str, Any], taint: Taint | Mapping[str, Any]) -> bool:
    """``Toleration.ToleratesTaint``: whether this one toleration tolerates this taint."""
    return _tolerates(*_toleration_parts(toleration), *_taint_parts(taint))


def tolerations_tolerate_taint(
    tolerations: Iterable[Toleration | Mapping[str, Any]], taint: Taint | Mapping[str, Any]
) -> bool:
    """``TolerationsTolerateTaint``: any of the tolerations tolerates the taint."""
    key, value, effect = _taint_parts(taint)
    return any(_tolerates(*_toleration_parts(t), key, value, effect) for t in tolerations)


def find_untolerated_taint(
    taints: Sequence[T],
    tolerations: Sequence[Toleration | Mapping[str, Any]],
    effects: tuple[str, ...] = FILTER_EFFECTS,
) -> T | None:
    """``FindMatchingUntoleratedTaint``: the first taint with one of ``effects`` not tolerated.

    The default ``effects`` are TaintToleration Filter's; ``None`` means the pod passes.
    """
    if not taints:
        return None
    parts = [_toleration_parts(t) for t in tolerations]
    for taint in taints:
        key, value, effect = _taint_parts(taint)
        if effect not in effects:
            continue
        if not any(_tolerates(*p, key, value, effect) for p in parts):
            return taint
    return None


def count_intolerable_prefer_no_schedule(
    taints: Sequence[Taint | Mapping[str, Any]], tolerations: Sequence[Toleration | Mapping[str, Any]]
) -> int:
    """TaintToleration Score (before normalisation): untolerated ``PreferNoSchedule`` taints.

    Only tolerations with an empty effect or ``PreferNoSchedule`` take part, as in the
    plugin's PreScore (``getAllTolerationPreferNoSchedule``).
    """
    parts = [p for p in map(_toleration_parts, tolerations) if p[3] in ("", PREFER_NO_SCHEDULE)]
    count = 0
    for taint in taints:
        key, value, effect = _taint_parts(taint)
        if effect != PREFER_NO_SCHEDULE:
            continue
        if not any(_tolerates(*p, key, value, effect) for p in parts):
            count += 1
    return count
