"""Names bound otherwise than by ``def``/``class`` (issue 24 item 5), on a handwritten package
that is both read by the signatures probe and imported here: every signature the probe
reports for ``boundpkg.bound`` must be what ``inspect.signature`` says of the real object.

(a) second names (``OldName = NewName``), (b) classes made by calls (``namedtuple``,
functional ``Enum``/``NamedTuple``/``TypedDict``), (c) class decorators that write into the
class, (d) methods attached after the class body (and ``functools.wraps``), (e) enum call
signatures as the probing Python reports them, or as another Python would (a ``pypi:``
target's ``python==`` pin) -- and (issue 34) members a module-level ``X = f(X)`` sets, bases
made by factory calls, a builtin base -- with the negatives next to each.
"""

from __future__ import annotations

import importlib
import inspect
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from probes.signatures import signatures

REPO = Path(__file__).resolve().parents[2]
SITE = str(REPO / "tests" / "fixtures" / "site")
KINDS = (
    "positional-only",
    "positional-or-keyword",
    "var-positional",
    "keyword-only",
    "var-keyword",
)


def listing(module: str = "boundpkg.bound") -> dict[str, dict[str, Any]]:
    data = signatures.run({"module": module, "qualname": None, "paths": [SITE]}, lambda w: None)
    return {s["qualname"]: s for s in data["symbols"]}


def one(qualname: str) -> dict[str, Any]:
    data = signatures.run(
        {"module": "boundpkg.bound", "qualname": qualname, "paths": [SITE]}, lambda w: None
    )
    return data["symbols"][0]


def shape(params: list[dict[str, Any]] | None) -> list[tuple[str, str, bool]] | None:
    if params is None:
        return None
    return [(p["name"], p["kind"], p["default"] is not None) for p in params]


def runtime(obj: object) -> list[tuple[str, str, bool]] | None:
    try:
        sig = inspect.signature(obj)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return [
        (p.name, KINDS[int(p.kind)], p.default is not inspect.Parameter.empty)
        for p in sig.parameters.values()
    ]


@pytest.fixture(scope="module")
def real() -> Any:
    sys.path.insert(0, SITE)
    try:
        yield importlib.import_module("boundpkg.bound")
    finally:
        sys.path.remove(SITE)
        for name in [m for m in sys.modules if m.split(".")[0] == "boundpkg"]:
            del sys.modules[name]


def test_every_signature_is_what_inspect_reports(real: Any) -> None:
    """The bench's rule on the fixture: public classes/functions of the module (second names
    included) and their public methods, ``__init__`` and ``__call__``."""
    static = listing()
    want: dict[str, Any] = {}
    for key, obj in vars(real).items():
        if key.startswith("_") or getattr(obj, "__module__", None) != real.__name__:
            continue
        if inspect.isfunction(obj) or inspect.isclass(obj):
            want[key] = runtime(obj)
        if inspect.isclass(obj):
            for m, raw in vars(obj).items():
                if m.startswith("_") and m not in ("__init__", "__call__"):
                    continue
                if isinstance(raw, (staticmethod, classmethod)):
                    want[f"{key}.{m}"] = runtime(raw.__func__)
                elif inspect.isfunction(raw):
                    want[f"{key}.{m}"] = runtime(raw)
    got: dict[str, Any] = {}
    for name, sym in static.items():
        got[name] = shape(sym["parameters"])
        for m in sym.get("members") or []:
            leaf = m["qualname"].rpartition(".")[2]
            if m["kind"] not in ("class", "property"):
                got[f"{name}.{leaf}"] = shape(m["parameters"])
    wrong = {k: (got.get(k), v) for k, v in want.items() if v is not None and got.get(k) != v}
    # the one known limit: fields from a variable are unknown (not listed), never wrong
    assert wrong.pop("Dynamic") == (None, want["Dynamic"])
    assert wrong == {}
    assert len([v for v in want.values() if v is not None]) >= 30  # the walk saw the fixture


def test_a_second_name_is_listed_with_its_members() -> None:
    syms = listing()
    old = syms["OldName"]
    assert old["alias_of"] == "NewName" and old["kind"] == "class"
    assert shape(old["parameters"]) == [
        ("a", "positional-or-keyword", False),
        ("b", "positional-or-keyword", True),
    ]
    assert {m["qualname"] for m in old["members"]} >= {"NewName.method", "NewName.__init__"}
    assert syms["old_function"]["alias_of"] == "new_function"
    # negatives: an imported name is a re-export; a private second name is not public
    assert "joined" not in syms and "_private_alias" not in syms
    assert one("OldName.method")["qualname"] == "NewName.method"  # resolution follows it


def test_classes_made_by_calls() -> None:
    syms = listing()
    assert syms["Point"]["made_by"] == "collections.namedtuple"
    assert syms["Point"]["constructor"]["via"] == "namedtuple"
    assert [(p["name"], p["default"]) for p in syms["Point"]["parameters"]] == [
        ("x", None),
        ("y", None),
        ("z", "0"),
    ]
    assert [p["name"] for p in syms["Pair"]["parameters"]] == ["left", "right"]
    assert [(p["name"], p["annotation"]) for p in syms["Typed"]["parameters"]] == [
        ("name", "str"),
        ("size", "int"),
    ]
    assert syms["Color"]["made_by"] == "enum.Enum" and syms["Color"]["constructor"]["via"] == "enum"
    assert syms["Movie"]["made_by"] == "typing.TypedDict"
    # negative: field names the source does not spell out leave it a variable
    assert "Dynamic" not in syms
    assert one("Dynamic")["kind"] == "variable"


def test_decorators_that_write_into_the_class_say_so() -> None:
    model = one("Model")
    by = "boundpkg.decos.compiled"
    assert model["constructor"]["via"] == f"decorator:{by}"
    assert model["constructor"]["changed_by"] == by
    assert shape(model["parameters"]) == [
        ("args", "var-positional", False),
        ("config", "keyword-only", True),
        ("prefix", "keyword-only", True),
        ("kwargs", "var-keyword", False),
    ]
    members = {m["qualname"].rpartition(".")[2]: m for m in model["members"]}
    assert members["__call__"]["changed_by"] == by and members["save_compiled"]["changed_by"] == by
    assert members["forward"].get("changed_by") is None
    # inherited by a subclass decorated again (called form of the same decorator)
    assert one("Model2")["constructor"]["via"] == f"decorator:{by}"
    # wraps keeps the signature; the added method is there, and says who added it
    settings = one("Settings")
    assert shape(settings["parameters"]) == [
        ("width", "positional-or-keyword", False),
        ("height", "positional-or-keyword", True),
    ]
    smembers = {m["qualname"].rpartition(".")[2]: m for m in settings["members"]}
    assert smembers["validate"]["changed_by"] == "boundpkg.decos.strictish"
    assert smembers["__init__"]["changed_by"] == "boundpkg.decos.strictish"
    # negative: a decorator that sets a docstring and a constant adds no member
    plain = one("Plain")
    assert [m["qualname"] for m in plain["members"]] == ["Plain.__init__"]
    assert plain["constructor"]["via"] == "__init__"


def test_methods_attached_after_the_body() -> None:
    attached = one("Attached")
    members = {m["qualname"].rpartition(".")[2]: m for m in attached["members"]}
    assert members["push"]["changed_by"] == f"line {members['push']['doc'].split()[-1]}"
    assert shape(members["push"]["parameters"]) == [
        ("self", "positional-or-keyword", False),
        ("repo_id", "positional-or-keyword", False),
        ("token", "keyword-only", True),
    ]
    assert members["helper"]["kind"] == "staticmethod"
    assert [p["name"] for p in members["short"]["parameters"]] == ["self", "n"]
    assert members["wrapped_push"]["wrapped"] == "Mixin.push"
    # negatives: a constant and a docstring are not methods
    assert "LIMIT" not in members and "__doc__" not in members


ENUM_CHECK = r"""
import enum, inspect, json, sys
sys.path[:0] = [sys.argv[1], sys.argv[2]]
from probes.signatures import signatures
import boundpkg.bound as real
KINDS = ("positional-only", "positional-or-keyword", "var-positional", "keyword-only",
         "var-keyword")
out = {}
for name in ("Color", "Empty", "Shade", "Base", "Planet"):
    sym = signatures.run({"module": "boundpkg.bound", "qualname": name, "paths": [sys.argv[2]]},
                         lambda w: None)["symbols"][0]
    got = [[p["name"], p["kind"]] for p in sym["parameters"]]
    want = [[p.name, KINDS[int(p.kind)]]
            for p in inspect.signature(getattr(real, name)).parameters.values()]
    out[name] = [got, want]
print(json.dumps({"version": list(sys.version_info[:2]), "enums": out}))
"""


def _pythons() -> list[str]:
    found = [sys.executable]
    for v in ("3.10", "3.12", "3.13"):
        for cand in (
            shutil.which(f"python{v}"),
            *Path("/root/.pyenv/versions").glob(f"{v}*/bin/python"),
        ):
            if cand and subprocess.run([str(cand), "-c", ""], capture_output=True).returncode == 0:
                found.append(str(cand))
                break
    return found


@pytest.mark.parametrize("python", _pythons(), ids=lambda p: Path(p).parent.parent.name or p)
def test_enum_calls_sign_as_the_probing_python_does(python: str) -> None:
    """3.11 and older: the metaclass's ``__call__`` (``value, names=None, ...``); 3.12+:
    ``(*values)`` with members, the functional API without (``Base``, ``Empty``)."""
    cp = subprocess.run(
        [python, "-c", ENUM_CHECK, str(REPO), SITE], capture_output=True, text=True, check=True
    )
    got = json.loads(cp.stdout)
    for name, (static, want) in got["enums"].items():
        assert static == want, (got["version"], name)


def test_members_a_module_level_rebinding_sets() -> None:
    """``AutoThing = auto_update(AutoThing)`` (transformers' ``auto_class_update``) sets
    ``classmethod(copy_func(AutoBase.from_config))``: a copy of a classmethod read off its
    class, whose ``__wrapped__`` is the bound method -- it signs without ``cls``."""
    thing = one("AutoThing")
    members = {m["qualname"].rpartition(".")[2]: m for m in thing["members"]}
    by = "boundpkg.decos.auto_update"
    assert members["from_config"]["kind"] == "classmethod"
    assert members["from_config"]["changed_by"] == by
    assert shape(members["from_config"]["parameters"]) == [
        ("config", "positional-or-keyword", False),
        ("kwargs", "var-keyword", False),
    ]
    # the body's own from_pretrained is replaced by the copy the function sets
    assert shape(members["from_pretrained"]["parameters"]) == [
        ("name", "positional-or-keyword", False),
        ("model_args", "var-positional", False),
        ("revision", "keyword-only", True),
        ("kwargs", "var-keyword", False),
    ]
    assert "LIMIT" not in members  # negative: a constant it sets is no method
    # negative: a class the module does not hand to a function keeps its body
    assert [m["qualname"] for m in one("LM")["members"]] == ["LM.__init__"]


def test_a_base_made_by_a_factory_call() -> None:
    """``class Embedder(as_embedding(LM))`` (vLLM's ``as_embedding_model``): the base is the
    class the factory defines and returns, over the class it was given."""
    factory_ctor = [
        ("config", "keyword-only", False),
        ("prefix", "keyword-only", True),
        ("kwargs", "var-keyword", False),
    ]
    embedder = one("Embedder")
    assert shape(embedder["parameters"]) == factory_ctor
    # the made classes are named by what they were made over
    assert embedder["constructor"]["from"] == "boundpkg.decos.ForPooling(LM)"
    assert embedder["constructor"]["via"] == "__init__" and embedder["constructor"]["inherited"]
    # ``Embedded = as_embedding(LM)``: the class it makes, by itself and as a base
    assert shape(one("FromMade")["parameters"]) == factory_ctor
    embedded = one("Embedded")
    assert embedded["kind"] == "class" and embedded["made_by"] == "boundpkg.decos.as_embedding"
    assert shape(embedded["parameters"]) == factory_ctor
    assert [m["qualname"] for m in embedded["members"]] == ["Embedded.pool"]
    # a builtin base signs as this Python's builtin does
    assert shape(one("Items")["parameters"]) == [("iterable", "positional-only", True)]


def test_a_function_made_by_a_factory_call() -> None:
    """``fused = lazy_wrapper(...)`` (vLLM's lazy-import wrappers): the def the factory
    returns; one made with ``@wraps(fn)`` signs as the argument given for ``fn``."""
    syms = listing()
    fused = syms["fused"]
    assert fused["kind"] == "function" and fused["made_by"] == "boundpkg.decos.lazy_wrapper"
    assert shape(fused["parameters"]) == [
        ("args", "var-positional", False),
        ("kwargs", "var-keyword", False),
    ]
    assert one("fused")["made_by"] == "boundpkg.decos.lazy_wrapper"  # and by its name
    traced = syms["traced_function"]
    assert traced["wrapped"] == "boundpkg.bound.new_function"
    assert shape(traced["parameters"]) == [
        ("p", "positional-or-keyword", False),
        ("q", "positional-or-keyword", True),
    ]
    # a factory that hands back what it was given: that object under a second name
    assert syms["same_function"]["alias_of"] == "boundpkg.bound.new_function"
    assert shape(syms["same_function"]["parameters"]) == shape(traced["parameters"])
    # negative: ... when what it was given is no def or class, a variable
    assert "value" not in syms and one("value")["kind"] == "variable"


ENUM_WANT = r"""
import inspect, json, sys
sys.path[:0] = [sys.argv[1]]
import boundpkg.bound as real
KINDS = ("positional-only", "positional-or-keyword", "var-positional", "keyword-only",
         "var-keyword")
print(json.dumps({"version": "%d.%d" % sys.version_info[:2], "enums": {
    name: [[p.name, KINDS[int(p.kind)]]
           for p in inspect.signature(getattr(real, name)).parameters.values()]
    for name in ("Color", "Empty", "Shade", "Base", "Planet")}}))
"""


@pytest.mark.parametrize("python", _pythons(), ids=lambda p: Path(p).parent.parent.name or p)
def test_enum_calls_read_for_another_python(python: str) -> None:
    """The probe runs here (this Python) and reads for ``python``'s version (``args["python"]``,
    a ``pypi:`` target's pin): what that Python's own ``inspect`` reports."""
    cp = subprocess.run([python, "-c", ENUM_WANT, SITE], capture_output=True, text=True, check=True)
    want = json.loads(cp.stdout)
    for name, shape_there in want["enums"].items():
        sym = signatures.run(
            {"module": "boundpkg.bound", "qualname": name, "paths": [SITE],
             "python": want["version"]},
            lambda w: None,
        )["symbols"][0]  # fmt: skip
        got = [[p["name"], p["kind"]] for p in sym["parameters"]]
        assert got == shape_there, (want["version"], name)
