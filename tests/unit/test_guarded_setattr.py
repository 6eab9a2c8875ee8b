"""Which writes of computed names on ``self`` leave a class closed (probes/signatures/_guarded,
read by ``_lookup._sets_any``): a name refused unless known, a pickled state restored."""

from __future__ import annotations

import ast

import pytest

from probes.signatures._lookup import _sets_any

CASES = [
    # scikit-learn's set_params: refused unless known, then set (in a loop, in an else)
    (
        "m(self, **params)",
        "for k, v in params.items():\n    k, d, s = k.partition('__')\n"
        "    if k not in valid:\n        raise ValueError(k)\n"
        "    if d:\n        pass\n    else:\n        setattr(self, k, v)",
        False,
    ),
    # data: any name (PretrainedConfig(**kwargs))
    ("m(self, **kw)", "for k, v in kw.items():\n    setattr(self, k, v)", True),
    # tested, but the refusal does not stop it
    (
        "m(self, **kw)",
        "for k, v in kw.items():\n    if k not in ok:\n        log(k)\n    setattr(self, k, v)",
        True,
    ),
    # tested, then re-bound before the write
    (
        "m(self, **kw)",
        "for k, v in kw.items():\n    if k not in ok:\n        raise KeyError(k)\n"
        "    k = k.upper()\n    setattr(self, k, v)",
        True,
    ),
    # the test only in another branch
    (
        "m(self, k, v)",
        "if a:\n    if k not in ok:\n        raise KeyError(k)\nsetattr(self, k, v)",
        True,
    ),
    # unpickling restores what __getstate__ saved; any other __dict__.update takes data
    ("__setstate__(self, state)", "self.__dict__.update(state)", False),
    ("load(self, state)", "self.__dict__.update(state)", True),
]


@pytest.mark.parametrize(("sig", "body", "open_"), CASES)
def test_sets_any(sig: str, body: str, open_: bool) -> None:
    src = f"class C:\n    def {sig}:\n" + "\n".join(f"        {ln}" for ln in body.splitlines())
    cls = ast.parse(src).body[0]
    assert isinstance(cls, ast.ClassDef)
    fn = cls.body[0]
    assert isinstance(fn, ast.FunctionDef)
    assert _sets_any(fn, src.splitlines(), cls, set()) is open_
