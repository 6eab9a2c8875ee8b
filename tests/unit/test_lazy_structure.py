"""transformers' lazy model packages: what ``define_import_structure`` serves at run time.

A model package's ``__init__`` (transformers 5.17.0, ``models/qwen2_vl/__init__.py``) lists some
modules under ``if TYPE_CHECKING`` and, at run time, replaces itself with ``_LazyModule(...,
define_import_structure(_file))``, which exports what *every* module beside it exports -- also
those the ``TYPE_CHECKING`` block leaves out (``video_processing_qwen2_vl``: vLLM 0.26.0's
``opencua.py:16`` imports ``Qwen2VLVideoProcessor`` from the package; check said
``import-missing``), but not ``convert_*``/``modular_*`` files.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from probes._finder import Finder
from probes.signatures._astindex import Index

INIT = """
from typing import TYPE_CHECKING
from ...utils import _LazyModule
from ...utils.import_utils import define_import_structure

if TYPE_CHECKING:
    from .configuration_m import *
else:
    import sys

    _file = globals()["__file__"]
    sys.modules[__name__] = _LazyModule(
        __name__, _file, define_import_structure(_file), module_spec=__spec__
    )
"""

FILES = {
    "configuration_m.py": '__all__ = ["MConfig"]\nclass MConfig: pass\n',
    "image_processing_m.py": '__all__ = ["MImageProcessor"]\nclass MImageProcessor: pass\n',
    "video_processing_m.py": '__all__ = ["MVideoProcessor"]\nclass MVideoProcessor: pass\n',
    "convert_m_weights.py": "def convert_checkpoint(): pass\n",
    "modular_m.py": "class MModular: pass\n",
}


# transformers 5.17.0's utils/import_utils.py:2673-2680, shortened
LAZY_CLASS = """
import types
class _LazyModule(types.ModuleType):
    def __getattr__(self, name):
        if name.endswith("ImageProcessorFast"):
            fallback_name = name[:-4]
            logger.warning_once(f"`{name}` is deprecated")
            return getattr(self, fallback_name)
        raise AttributeError(name)
"""


def package(tmp_path: Path, init: str) -> Index:
    folder = tmp_path / "tf" / "models" / "m"
    folder.mkdir(parents=True)
    for p in (tmp_path / "tf", tmp_path / "tf" / "models"):
        (p / "__init__.py").write_text("")
    (tmp_path / "tf" / "utils.py").write_text(textwrap.dedent(LAZY_CLASS))
    (folder / "__init__.py").write_text(textwrap.dedent(init))
    for name, text in FILES.items():
        (folder / name).write_text(text)
    return Index(Finder([str(tmp_path)]))


@pytest.mark.parametrize(
    ("name", "resolves"),
    [
        ("MConfig", True),  # listed under TYPE_CHECKING too
        ("MVideoProcessor", True),  # only the run-time structure has it
        ("convert_checkpoint", False),  # convert_* files are left out
        ("MModular", False),  # and modular_* files
        ("NoSuchName", False),
    ],
)
def test_the_run_time_structure_exports_every_module_beside_the_init(
    tmp_path: Path, name: str, resolves: bool
) -> None:
    index = package(tmp_path, INIT)
    assert (index.resolve("tf.models.m", name) is not None) is resolves


def test_without_the_call_only_the_type_checking_block_counts(tmp_path: Path) -> None:
    index = package(tmp_path, INIT.replace("define_import_structure(_file)", "{}"))
    assert index.resolve("tf.models.m", "MConfig") is not None
    assert index.resolve("tf.models.m", "MVideoProcessor") is None


def test_the_run_time_class_serves_an_old_name_with_its_warning(tmp_path: Path) -> None:
    """vLLM 0.26.0's ``gemma3n_mm.py:17``: ``from transformers.models.siglip import
    SiglipImageProcessorFast`` -- served as ``SiglipImageProcessor``, warned (check said
    ``import-missing``)."""
    index = package(tmp_path, INIT)
    got = index.resolve("tf.models.m", "MImageProcessorFast")
    assert got is not None and got.name == "MImageProcessor"
    first = got.chain[0]
    assert (first.how, first.file, first.line) == ("deprecated", "tf/utils.py", 7)
    assert index.resolve("tf.models.m", "MNoSuchImageProcessorFast") is None
    assert index.resolve("tf.models.m", "MConfigFast") is None  # no rule for that suffix
