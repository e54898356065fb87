"""gpuplane.pyyaml: PyYAML's NON_PRINTABLE comes pre-compiled from an equivalent class, and is it."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys

from gpuplane.pyyaml import NON_PRINTABLE, NON_PRINTABLE_SET, yaml

EVERY_CODE_POINT = "".join(map(chr, range(0x110000)))


def test_the_seeded_class_finds_the_same_characters_as_pyyamls() -> None:
    ours = re.compile(NON_PRINTABLE_SET)
    pyyamls = re.compile(NON_PRINTABLE)
    assert [m.start() for m in ours.finditer(EVERY_CODE_POINT)] == [
        m.start() for m in pyyamls.finditer(EVERY_CODE_POINT)
    ]


def test_it_is_the_text_pyyaml_compiles() -> None:
    """A PyYAML whose Reader declares another pattern fails here (the seed would then be unused)."""
    with open(yaml.reader.__file__, encoding="utf-8") as handle:
        tree = ast.parse(handle.read())
    declared = [
        ast.literal_eval(node.value.args[0])
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "NON_PRINTABLE" for t in node.targets)
        and isinstance(node.value, ast.Call)
    ]
    assert declared == [NON_PRINTABLE]


PROBE = """
import json, re, sys
import gpuplane.sources.loader
import yaml.reader
print(json.dumps({"seeded": yaml.reader.Reader.NON_PRINTABLE.pattern}))
"""


def test_a_quick_command_never_compiles_pyyamls_class() -> None:
    """In a fresh interpreter the loader's PyYAML has the seeded pattern (the cheap one)."""
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout)["seeded"] == NON_PRINTABLE_SET


def test_the_reader_still_refuses_what_yaml_forbids() -> None:
    """The pure-Python reader (not gpuplane's loader) reports the same character and position."""
    for text, bad in (("a: b\x07\n", "\x07"), ("a: \ud800\n", "\ud800"), ("a: \ufffe\n", "\ufffe")):
        try:
            yaml.load(text, Loader=yaml.SafeLoader)
        except yaml.reader.ReaderError as exc:
            assert exc.character == ord(bad)
        else:
            raise AssertionError(f"{text!r} was read")
    assert yaml.load("a: \u00e9\U0001f600\n", Loader=yaml.SafeLoader) == {"a": "\u00e9\U0001f600"}
