"""Every record (gpuplane.records) behaves as the dataclass it replaces, on random values.

A record is a plain class with a hand-written ``__init__`` and ``__repr__``/``__eq__``/``__hash__``
read from its ``__slots__`` (start-up time: ``@dataclass`` compiles its methods at import). The
twin of each record is the dataclass built from the record itself (its slots, its ``__init__``'s
defaults, frozen or not, keyword-only or not), so a record whose ``__init__`` forgot a field, set
one to the wrong default or took them in another order fails here.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import pickle
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplane.records import FrozenRecord, Record, _fields_of

# Each record, as the dataclass it replaced declared it (dataclasses.fields): ``name``,
# ``name=default`` (a repr), ``name*factory``; ``!c``: compare=False, ``!r``: repr=False; ``kw``:
# keyword-only; and whether it was frozen. A name starting with ``_`` was a cache: the record
# sets it to its default itself (its ``__init__`` does not take it), and leaves it out of
# equality and ``repr`` (ContainerRef's dataclass compared and showed its caches).
SPECS: dict[str, tuple[bool, tuple[str, ...]]] = {
    "gpuplane.k8s.manifest.LoadError": (False, ("path", "line", "message")),
    "gpuplane.k8s.validation.ResourceError": (
        True,
        ("check", "section", "name", "value", "detail", "defaulted=False"),
    ),
    "gpuplane.gpu.resources.MigProfileName": (
        True,
        ("compute_slices", "memory_gb", "attributes=()", "ci_slices=None"),
    ),
    "gpuplane.gpu.resources.GpuResource": (True, ("name", "vendor", "kind", "mig_profile=None")),
    "gpuplane.k8s.workloads.model.Gang": (False, ("mechanism", "name", "min_member", "queue=None")),
    "gpuplane.k8s.workloads.model.PodSet": (
        False,
        (
            "source",
            "name",
            "role",
            "count",
            "template",
            "template_path",
            "gang=None",
            "queue=None",
            "distributed=False",
            "volume_claim_templates*list",
            "count_known=True",
            "max_count=None",
            "priority_class=None",
            "template_source=None",
            "synthetic=False",
            "injected=None",
            "overrides=()",
            "pod_error=None",
            "suspended=False",
            "resume_count=0",
            "managed_shm=None",
            "closed=False",
            "_pod=None!c!r",
        ),
    ),
    "gpuplane.k8s.workloads.model.ExpansionProblem": (False, ("source", "path", "detail", "got=None")),
    "gpuplane.k8s.workloads.model.ExpandContext": (False, ("nodes=None", "related=None", "problems=None")),
    "gpuplane.app.lint.LintRequest": (
        True,
        (
            "paths=()",
            "inline=None",
            "cluster=None",
            "context=None",
            "kubeconfig=None",
            "disable=frozenset()",
            "enable=frozenset()",
            "config=None",
            "config_start=None",
            "fail_on=None",
            "skip_non_manifests=False",
            "enable_all=False",
            "progress=False",
        ),
    ),
    "gpuplane.app.lint.LintOutcome": (False, ("result", "loaded", "threshold", "bad_input")),
    "gpuplane.app.outcome.Message": (True, ("kind", "text")),
    "gpuplane.app.outcome.Messages": (False, ("listener=None", "items*list")),
    "gpuplane.app.outcome.Surface": (
        True,
        ("option_prefix", "rules_hint", "streams", "refuse_empty", "word_separator='-'"),
    ),
    "gpuplane.app.outcome.Served": (False, ("result", "bad_input")),
    "gpuplane.lint.context.ContainerRef": (
        False,
        ("data", "path", "section", "index", "_gpu=None", "_blocks=None", "_api_errors=None"),
    ),
    "gpuplane.lint.coverage.Skipped": (False, ("source", "reason")),
    "gpuplane.lint.engine.Suppressed": (False, ("finding", "reason")),
    "gpuplane.lint.engine.RuleFailure": (False, ("rule", "message")),
    "gpuplane.lint.engine.LintResult": (
        False,
        ("findings", "objects", "failures*list", "suppressed*list", "skipped*list"),
    ),
    "gpuplane.lint.finding.SetValue": (True, ("path", "value")),
    "gpuplane.lint.finding.AppendItem": (True, ("path", "value")),
    "gpuplane.lint.finding.RenameKey": (True, ("path", "new_key")),
    "gpuplane.lint.finding.DeleteKey": (True, ("path",)),
    "gpuplane.lint.rules.distributed._launcher.LauncherDeadlock": (
        True,
        ("job", "obj", "path", "minimum", "workers", "defaulted"),
    ),
    "gpuplane.lint.rules.serving._engines.EngineRun": (
        False,
        ("engine", "sizes*dict", "switches*set", "unknown=False", "path=()"),
    ),
    "gpuplane.ruleset.registry.RuleMeta": (
        True,
        (
            "id kw",
            "severity kw",
            "category kw",
            "summary kw",
            "docs_path kw",
            "context='none' kw",
            "fixable=False kw",
            "fix_safety='safe' kw",
            "tier='default' kw",
            "check!c kw",
        ),
    ),
    "gpuplane.sources.loader.LoadResult": (
        False,
        ("objects*list", "errors*list", "files=0", "list_metadata*list", "skipped*list"),
    ),
}
FACTORIES = {"list": list, "dict": dict, "set": set}


class Field(NamedTuple):
    name: str
    default: Any  # inspect.Parameter.empty when required
    factory: Any
    compare: bool
    repr: bool
    kw_only: bool


def _parse(text: str) -> Field:
    kw_only = text.endswith(" kw")
    text = text.removesuffix(" kw")
    compare = "!c" not in text
    shown = "!r" not in text
    text = text.replace("!c", "").replace("!r", "")
    default: Any = inspect.Parameter.empty
    factory = None
    if "=" in text:
        text, value = text.split("=", 1)
        default = eval(value)  # a repr of a literal, written above
    elif "*" in text:
        text, name = text.split("*", 1)
        factory = FACTORIES[name]
    return Field(text, default, factory, compare, shown, kw_only)


def _records() -> dict[str, type[Record]]:
    found = {}
    for key in SPECS:
        module, name = key.rsplit(".", 1)
        found[key] = getattr(importlib.import_module(module), name)
    return found


RECORDS = _records()
VALUES = st.one_of(st.none(), st.integers(-2, 2), st.sampled_from(["a", "b"]), st.tuples(st.integers(0, 1)))


def _params(cls: type) -> list[inspect.Parameter]:
    return list(inspect.signature(cls.__init__).parameters.values())[1:]


def _spec(cls: type) -> tuple[bool, list[Field]]:
    frozen, fields = SPECS[f"{cls.__module__}.{cls.__qualname__}"]
    return frozen, [_parse(f) for f in fields]


def twin(cls: type[Record]) -> type:
    """The dataclass ``cls`` replaced (without its caches)."""
    frozen, fields = _spec(cls)
    specs: list[tuple[str, Any, Any]] = []
    for f in fields:
        if f.name.startswith("_"):
            continue
        options: dict[str, Any] = {"compare": f.compare, "repr": f.repr, "kw_only": f.kw_only}
        if f.factory is not None:
            options["default_factory"] = f.factory
        elif f.default is not inspect.Parameter.empty:
            options["default"] = f.default
        specs.append((f.name, Any, dataclasses.field(**options)))
    made = dataclasses.make_dataclass(cls.__name__, specs, frozen=frozen, slots=True)
    made.__qualname__ = cls.__qualname__
    return made


def test_every_record_is_specified() -> None:
    """A record missing from SPECS would escape the tests below."""
    src = Path(__file__).resolve().parent.parent / "src"
    defined = set()
    for path in (src / "gpuplane").rglob("*.py"):
        module = ".".join(path.relative_to(src).with_suffix("").parts)
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and any(
                isinstance(b, ast.Name) and b.id in ("Record", "FrozenRecord") for b in node.bases
            ):
                defined.add(f"{module}.{node.name}")
    defined.discard("gpuplane.records.FrozenRecord")
    assert defined == set(SPECS)


@pytest.mark.parametrize("cls", RECORDS.values(), ids=lambda c: c.__qualname__)
def test_the_init_takes_the_fields_of_the_dataclass(cls: type[Record]) -> None:
    frozen, fields = _spec(cls)
    assert issubclass(cls, FrozenRecord) == frozen
    assert _fields_of(cls) == tuple(f.name for f in fields)  # the slots, in the dataclass's order
    public = [f for f in fields if not f.name.startswith("_")]
    params = {p.name: p for p in _params(cls)}
    assert list(params) == [f.name for f in public] or all(f.kw_only for f in public)
    assert set(params) == {f.name for f in public}
    for f in public:
        p = params[f.name]
        assert (p.kind is inspect.Parameter.KEYWORD_ONLY) == f.kw_only
        assert p.default == (None if f.factory is not None else f.default)
    required = {
        f.name: f"<{f.name}>" for f in public if f.default is inspect.Parameter.empty and not f.factory
    }
    made = cls(**required)
    for f in fields:
        if f.name.startswith("_"):
            assert getattr(made, f.name) == f.default  # a cache starts at its default
        elif f.factory is not None:
            assert getattr(made, f.name) == f.factory()
            assert getattr(made, f.name) is not getattr(cls(**required), f.name)  # a new one each time


@pytest.mark.parametrize("cls", RECORDS.values(), ids=lambda c: c.__qualname__)
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_a_record_behaves_as_its_dataclass(cls: type[Record], data: st.DataObject) -> None:
    made = twin(cls)
    params = _params(cls)
    kw_only = all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params)
    # a default factory's None means "not given" to the record, a value to the dataclass
    factories = {f.name for f in _spec(cls)[1] if f.factory is not None}

    def draw_args() -> dict[str, Any]:
        return {
            p.name: data.draw(VALUES.filter(lambda v: v is not None) if p.name in factories else VALUES)
            for p in params
            if p.default is inspect.Parameter.empty or data.draw(st.booleans())
        }

    first, second = draw_args(), draw_args()
    ours = [cls(**first), cls(**second)]
    theirs = [made(**first), made(**second)]
    if not kw_only and len(first) == len(params):  # positionally too
        assert repr(cls(*first.values())) == repr(made(*first.values()))
    for mine, twin_one in zip(ours, theirs, strict=True):
        assert repr(mine) == repr(twin_one)
        for name in cls._fields:
            assert getattr(mine, name) == getattr(twin_one, name)
    assert (ours[0] == ours[1]) == (theirs[0] == theirs[1])
    assert (ours[0] != ours[1]) == (theirs[0] != theirs[1])
    assert ours[0] != theirs[0]  # another class: never equal
    if issubclass(cls, FrozenRecord):
        if ours[0] == ours[1]:
            assert hash(ours[0]) == hash(ours[1])
        for obj in (ours[0], theirs[0]):
            with pytest.raises(AttributeError):
                setattr(obj, cls._fields[0], 1)
        assert pickle.loads(pickle.dumps(ours[0])) == ours[0]
    else:
        for obj in (ours[0], theirs[0]):
            with pytest.raises(TypeError):
                hash(obj)
        setattr(ours[0], cls._fields[0], "z")
        setattr(theirs[0], cls._fields[0], "z")
        assert repr(ours[0]) == repr(theirs[0])
