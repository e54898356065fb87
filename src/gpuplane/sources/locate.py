"""Line numbers of fields inside a YAML document, computed only when asked.

Bulk loading uses the C loader and keeps no marks; when a finding needs the line
of ``spec.template.spec.containers[0].resources``, the document is composed once
(node graph with marks, cached) and the path walked.
"""

from __future__ import annotations

from collections.abc import Callable

import yaml

from gpuplane.sources.manifest import FieldPath

try:
    _Loader: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover
    _Loader = yaml.SafeLoader


class DocumentLocator:
    """Resolves field paths of one YAML document to 1-based file lines."""

    __slots__ = ("_first_line", "_root", "_text")

    def __init__(self, text: str, first_line: int) -> None:
        self._text = text
        self._first_line = first_line
        self._root: yaml.Node | None = None

    def _node(self) -> yaml.Node | None:
        if self._root is None and self._text is not None:
            try:
                self._root = yaml.compose(self._text, Loader=_Loader)
            except yaml.YAMLError:
                self._root = None
            self._text = None  # compose once; keep the tree, drop the text
        return self._root

    def line_of(self, path: FieldPath) -> int | None:
        """Line of the deepest existing node along ``path`` (None if the document is empty)."""
        node = self._node()
        if node is None:
            return None
        line = node.start_mark.line
        for step in path:
            child = None
            if isinstance(node, yaml.MappingNode) and isinstance(step, str):
                for key, value in node.value:
                    if isinstance(key, yaml.ScalarNode) and key.value == step:
                        line = key.start_mark.line
                        child = value
                        break
            elif isinstance(node, yaml.SequenceNode) and isinstance(step, int) and 0 <= step < len(node.value):
                child = node.value[step]
                line = child.start_mark.line
            if child is None:
                break
            node = child
        return self._first_line + line

    def scoped(self, prefix: FieldPath) -> Callable[[FieldPath], int | None]:
        """A locator for an object nested at ``prefix`` (e.g. an item of a ``kind: List``)."""
        return lambda path: self.line_of(prefix + tuple(path))
