"""Issue 21 item 14: the ``now:`` signature of ``check`` folded to what matters, and table
cells broken only after separators."""

from __future__ import annotations

from harness.views.fold import fit_widths, fold, fold_signature

LONG = (
    "CacheConfig(block_size: SkipValidation[BlockSize] = None, gpu_memory_utilization: float "
    '= 0.9, swap_space: float = 4, cache_dtype: CacheDType = "auto", is_attention_free: bool '
    "= False, enable_prefix_caching: bool = True, prefix_caching_hash_algo: "
    'PrefixCachingHashAlgo = "sha256", *, kv_offloading: dict[str, int] = {"a": 1, "b": 2})'
    " -> None"
)


def test_a_long_signature_keeps_required_passed_and_named_parameters() -> None:
    got = fold_signature(
        LONG, "cache_config = CacheConfig(swap_space=8,", "leaves enable_prefix_caching to ..."
    )
    assert got == (
        "CacheConfig(..., swap_space: float = 4, ..., enable_prefix_caching: bool = True, ...)"
        " -> None"
    )
    required = (
        "f(a: int, b: Dict[str, int], c: int = 1, "
        + ", ".join(f"x{i}: int = {i}" for i in range(40))
        + ", *args: Any, **kw: Any)"
    )
    assert fold_signature(required) == "f(a: int, b: Dict[str, int], ...)"


def test_a_short_signature_is_left_whole() -> None:
    short = "f(a: int, b: int = 2) -> int"
    assert fold_signature(short, "", "") == short


def test_cells_break_after_separators_only() -> None:
    path = "/root/miniconda3/envs/eagle3-training-env/bin/python3.12"
    lines = fold(path, 16).splitlines()
    assert "".join(lines) == path and all(len(x) <= 16 for x in lines)
    assert all(x[-1] in "/.-" for x in lines[:-1]), lines
    assert fit_widths(("name", "python"), [("gpu (default)", path)], 40) == [13, 27]
