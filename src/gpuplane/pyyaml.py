"""PyYAML, imported with its one costly regular expression already compiled (start-up time).

``import yaml`` runs ``yaml.reader``, whose ``Reader`` class compiles ``NON_PRINTABLE`` (the
characters YAML forbids) when the class is defined: a negated class with ranges up to
``\\U0010ffff``, for which ``re``'s compiler fills a 65,536-entry table in Python, about 57 M
instructions, more than a bare ``python -c pass`` costs six times over, in every process that
reads YAML (a third of PyYAML's import, an eighth of a one-file ``gpuplane lint``; issue 14 item
4). gpuplane reads YAML with the C loader, which never uses that pattern. So before the first
``import yaml`` the pattern is put in ``re``'s compile cache, compiled from the positive class of
the same characters (:data:`NON_PRINTABLE_SET`: what the negated class leaves out of the code
points, which compiles in 4 M): ``re.compile`` of PyYAML's text then returns it, and
``Reader.check_printable`` finds the same characters
(``tests/test_pyyaml.py`` compares both on every code point). Nothing of PyYAML is touched;
where ``re`` keeps no such cache (another Python), the pattern is compiled as before.

Import ``yaml`` from here in modules a quick command may import first
(``from gpuplane.pyyaml import yaml``); elsewhere a plain ``import yaml`` finds it loaded.
"""

from __future__ import annotations

import re
import sys

# yaml/reader.py (PyYAML 5.1 to 6.x), Reader.NON_PRINTABLE
NON_PRINTABLE = "[^\x09\x0a\x0d\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"
# the same characters as a positive class: C0 controls but tab, LF and CR; DEL and the C1
# controls but NEL; the surrogates; U+FFFE and U+FFFF
NON_PRINTABLE_SET = "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\ud800-\udfff\ufffe\uffff]"


def _seed() -> None:
    cache = getattr(re, "_cache", None)
    if "yaml" not in sys.modules and isinstance(cache, dict):
        cache.setdefault((str, NON_PRINTABLE, 0), re.compile(NON_PRINTABLE_SET))


_seed()

import yaml as yaml  # noqa: E402  # after the seed: yaml.reader compiles NON_PRINTABLE at import
