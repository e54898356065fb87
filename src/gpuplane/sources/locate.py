"""Line numbers of fields inside a YAML document.

Two sources, same answers:

- a :data:`LineIndex` the loader records while it builds the data of a plain document
  (it composes the nodes anyway, so their marks are free; only the entry lines of
  each dict and list are kept, a few ints per container);
- otherwise, when a finding asks, the document is composed once (node graph with marks,
  cached) and the path walked: documents with aliases, merge keys or explicit tags, and
  JSON. (Documents with duplicate keys never get here: the loader refuses them.)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpuplane.pyyaml import yaml  # first: PyYAML with its costly pattern pre-compiled

# isort: split
from yaml.nodes import MappingNode, ScalarNode, SequenceNode
from yaml.resolver import BaseResolver

from gpuplane.k8s.manifest import FieldPath

try:
    _BaseLoader: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover
    _BaseLoader = yaml.SafeLoader

_STR_TAG = BaseResolver.DEFAULT_SCALAR_TAG
_SEQ_TAG = BaseResolver.DEFAULT_SEQUENCE_TAG
_MAP_TAG = BaseResolver.DEFAULT_MAPPING_TAG


# A document's line index: ``id(container) -> (container, entry lines)`` (dict keys in
# insertion order, list items in order; 0-based lines in the document text), plus
# ``_ROOT -> (root data, root line)``. Containers are held so their ids stay theirs.
LineIndex = dict[Any, Any]
_ROOT = "root"  # index key of the root entry (never an int id)


class MarksLoader(_BaseLoader):
    """A composer that only needs node kinds and marks, never tags.

    Composing is what a line lookup pays for; most of PyYAML's compose time is the
    Python-level tag resolution (implicit-resolver regexes on every scalar, the path
    resolver stack on every node). A line lookup walks mapping keys by their text and
    sequence items by index, so every node gets the plain str/seq/map tag: about 20%
    less time per document, same marks.
    """

    def descend_resolver(self, current_node: Any, current_index: Any) -> None:
        return None

    def ascend_resolver(self) -> None:
        return None

    def resolve(self, kind: type, value: Any, implicit: Any) -> str:
        if kind is ScalarNode:
            return _STR_TAG
        return _SEQ_TAG if kind is SequenceNode else _MAP_TAG


class DocumentLocator:
    """Resolves field paths of one YAML document to 1-based file lines."""

    __slots__ = ("_first_line", "_index", "_root", "_text")

    def __init__(self, text: str, first_line: int, index: LineIndex | None = None) -> None:
        self._first_line = first_line
        self._root: yaml.Node | None = None
        usable = index is not None and _ROOT in index
        self._index = index if usable else None
        self._text: str | None = None if usable else text  # no compose will be needed

    def _node(self) -> yaml.Node | None:
        if self._root is None and self._text is not None:
            try:
                self._root = yaml.compose(self._text, Loader=MarksLoader)
            except yaml.YAMLError:
                self._root = None
            self._text = None  # compose once; keep the tree, drop the text
        return self._root

    def line_of(self, path: FieldPath) -> int | None:
        """Line of the deepest existing node along ``path`` (None if the document is empty)."""
        if self._index is not None:
            return self._first_line + self._indexed_line(self._index, path)
        node = self._node()
        if node is None:
            return None
        line = node.start_mark.line
        for step in path:
            child = None
            if isinstance(node, MappingNode) and isinstance(step, str):
                for key, value in node.value:
                    if isinstance(key, ScalarNode) and key.value == step:
                        line = key.start_mark.line
                        child = value
                        break
            elif isinstance(node, SequenceNode) and isinstance(step, int) and 0 <= step < len(node.value):
                child = node.value[step]
                line = child.start_mark.line
            if child is None:
                break
            node = child
        return self._first_line + line

    @staticmethod
    def _indexed_line(index: LineIndex, path: FieldPath) -> int:
        """The walk of :meth:`line_of` over the data and its recorded entry lines.

        A mapping step lands on its key's line, a sequence step on the item's first line,
        as the node walk does.
        """
        node, line = index[_ROOT]
        for step in path:
            entry = index.get(id(node))
            if entry is None:
                break
            lines = entry[1]
            if isinstance(node, dict):
                if isinstance(step, int) or step not in node:
                    break
                for position, key in enumerate(node):
                    if key == step:
                        line = lines[position]
                        break
                node = node[step]
            elif isinstance(node, list):
                if not isinstance(step, int) or not 0 <= step < len(node):
                    break
                line = lines[step]
                node = node[step]
            else:
                break
        return line

    def scoped(self, prefix: FieldPath) -> Callable[[FieldPath], int | None]:
        """A locator for an object nested at ``prefix`` (e.g. an item of a ``kind: List``)."""
        return lambda path: self.line_of(prefix + tuple(path))
