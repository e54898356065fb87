"""The pods on nodes, indexed by namespace and by label, for every label-selector question.

Why: topology spread, inter-pod (anti-)affinity, their scores and ReadWriteOncePod ask "which
pods of these namespaces does this selector match?" once per Pending pod. Walking every pod of
the cluster for each asks pending x pods selector checks (1.7 M for 57 pods on a 30,000-pod
cluster); with an inverted index (namespace -> label key -> value -> pods) a question costs the
pods that can match, not the cluster.

Exactness: the index only *narrows*. For each selector it picks the requirement with the fewest
candidates (``matchLabels`` and ``In``: the union of the value postings; ``Exists``: every pod
with the key; ``NotIn`` / ``DoesNotExist``: the complement of those postings within the
namespace) and then checks every candidate with :func:`label_selector_matches`, upstream's
``Requirement.Matches`` semantics (staging/src/k8s.io/apimachinery/pkg/labels/selector.go). Every
candidate set is a superset of the pods the selector matches, so the answer equals the naive walk
(tests/scheduler/test_pod_index.py checks it with hypothesis on random clusters). A requirement
``NewRequirement`` would refuse (``In`` without values, ``Exists`` with values, an unknown
operator) matches nothing, as in :func:`label_selector_matches`.

The index is kept in step with :class:`ClusterIndex`'s ``add_pod`` / ``remove_pod`` (simulate's
assume and forget), so it always equals one built from scratch.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from gpuplane.k8s.objects import LabelSelector, Pod
from gpuplane.k8s.selectors import label_selector_matches, label_selector_requirements

Entry = tuple[Pod, int]  # a pod and the index of its node
_Key = tuple[int, int]  # (id(pod), node index): one pod object placed on one node
_Postings = dict[_Key, Entry]
Selector = LabelSelector | Mapping[str, Any] | None


class PodIndex:
    """Pods on nodes by namespace, and per namespace by label key and value."""

    __slots__ = ("_by_key", "_by_namespace", "_by_value", "_cache", "_repeats", "visited")

    def __init__(self) -> None:
        self._by_namespace: dict[str, _Postings] = {}
        # namespace -> label key -> pods having the key
        self._by_key: dict[str, dict[str, _Postings]] = {}
        # namespace -> label key -> label value -> pods
        self._by_value: dict[str, dict[str, dict[str, _Postings]]] = {}
        # A pod object listed more than once on one node (never in a real snapshot) counts as
        # often as it is listed, like the walk over NodeInfo.pods.
        self._repeats: dict[_Key, int] = {}
        self._cache: dict[Any, list[Entry]] = {}
        # Work done: candidates checked against a selector (tests assert it, never a time).
        self.visited = 0

    # -- changes -------------------------------------------------------------------------------

    def add(self, pod: Pod, j: int) -> None:
        key = (id(pod), j)
        namespace = pod.metadata.namespace or "default"
        in_namespace = self._by_namespace.setdefault(namespace, {})
        self._cache.clear()
        if key in in_namespace:
            self._repeats[key] = self._repeats.get(key, 1) + 1
            return
        entry = (pod, j)
        in_namespace[key] = entry
        by_key = self._by_key.setdefault(namespace, {})
        by_value = self._by_value.setdefault(namespace, {})
        for label, value in pod.metadata.labels.items():
            by_key.setdefault(label, {})[key] = entry
            by_value.setdefault(label, {}).setdefault(value, {})[key] = entry

    def remove(self, pod: Pod, j: int) -> None:
        """Take every listing of ``pod`` on node ``j`` out (``ClusterIndex.remove_pod`` drops them all)."""
        key = (id(pod), j)
        namespace = pod.metadata.namespace or "default"
        in_namespace = self._by_namespace.get(namespace)
        if in_namespace is None or in_namespace.pop(key, None) is None:
            return
        self._cache.clear()
        self._repeats.pop(key, None)
        by_key = self._by_key[namespace]
        by_value = self._by_value[namespace]
        for label, value in pod.metadata.labels.items():
            postings = by_key[label]
            del postings[key]
            if not postings:
                del by_key[label]
            values = by_value[label]
            postings = values[value]
            del postings[key]
            if not postings:
                del values[value]
                if not values:
                    del by_value[label]

    # -- questions -----------------------------------------------------------------------------

    def namespaces(self) -> list[str]:
        """Namespaces that have pods on nodes."""
        return [ns for ns, pods in self._by_namespace.items() if pods]

    def in_namespace(self, namespace: str) -> list[Entry]:
        return self._expand(list(self._by_namespace.get(namespace, {}).values()))

    def select(self, namespaces: Iterable[str], selectors: Sequence[Selector]) -> list[Entry]:
        """The pods of ``namespaces`` that *all* ``selectors`` match (``label_selector_matches``
        of each; a nil selector matches nothing), each pod once. Memoized until the pods change."""
        wanted = tuple(dict.fromkeys(namespaces))
        cache_key = _cache_key(wanted, selectors)
        if cache_key is not None:
            found = self._cache.get(cache_key)
            if found is not None:
                return found
        out: list[Entry] = []
        for namespace in wanted:
            candidates = self._candidates(namespace, selectors)
            if not candidates:
                continue
            self.visited += len(candidates)
            for entry in candidates:
                labels = entry[0].metadata.labels
                if all(label_selector_matches(s, labels) for s in selectors):
                    out.append(entry)
        out = self._expand(out)
        if cache_key is not None:
            self._cache[cache_key] = out
        return out

    def _expand(self, entries: list[Entry]) -> list[Entry]:
        if not self._repeats:
            return entries
        out: list[Entry] = []
        for entry in entries:
            out.extend([entry] * self._repeats.get((id(entry[0]), entry[1]), 1))
        return out

    def _candidates(self, namespace: str, selectors: Sequence[Selector]) -> list[Entry]:
        """A superset of the namespace's pods all ``selectors`` match, the smallest one the
        index knows: see the module docstring."""
        everyone = self._by_namespace.get(namespace)
        if not everyone:
            return []
        by_key = self._by_key.get(namespace, {})
        by_value = self._by_value.get(namespace, {})
        best: tuple[int, str, Any] | None = None  # (size, how, what)

        def offer(size: int, how: str, what: Any) -> None:
            nonlocal best
            if best is None or size < best[0]:
                best = (size, how, what)

        for selector in selectors:
            parts = label_selector_requirements(selector)
            if parts is None:
                return []
            match_labels, requirements = parts
            for label, value in match_labels.items():
                if isinstance(label, str) and isinstance(value, str):
                    postings = by_value.get(label, {}).get(value, {})
                    offer(len(postings), "postings", postings)
            for label, op, values in requirements:
                if op == "In":
                    if not values:
                        return []
                    lists = _value_postings(by_value.get(label, {}), values)
                    offer(sum(map(len, lists)), "union", lists)
                elif op == "NotIn":
                    if not values:
                        return []
                    lists = _value_postings(by_value.get(label, {}), values)
                    offer(len(everyone) - sum(map(len, lists)), "minus", lists)
                elif op == "Exists":
                    if values:
                        return []
                    postings = by_key.get(label, {})
                    offer(len(postings), "postings", postings)
                elif op == "DoesNotExist":
                    if values:
                        return []
                    postings = by_key.get(label, {})
                    offer(len(everyone) - len(postings), "minus", [postings])
                else:  # an operator NewRequirement refuses: the selector matches nothing
                    return []
        if best is None:
            return list(everyone.values())
        size, how, what = best
        if size == 0:
            return []
        if how == "postings":
            return list(what.values())
        if how == "union":
            return [entry for postings in what for entry in postings.values()]
        excluded: list[_Postings] = what
        if len(excluded) == 1:
            (only,) = excluded
            return [entry for key, entry in everyone.items() if key not in only]
        return [entry for key, entry in everyone.items() if not any(key in p for p in excluded)]


def _value_postings(values_of_key: dict[str, _Postings], values: Sequence[Any]) -> list[_Postings]:
    """The postings of each distinct string value (a non-string value matches no label)."""
    out = []
    for value in dict.fromkeys(v for v in values if isinstance(v, str)):
        postings = values_of_key.get(value)
        if postings:
            out.append(postings)
    return out


def _cache_key(namespaces: tuple[str, ...], selectors: Sequence[Selector]) -> Any:
    import msgspec  # deferred for start-up time

    try:
        return (namespaces, msgspec.json.encode(list(selectors)))
    except (TypeError, msgspec.EncodeError):
        return None
