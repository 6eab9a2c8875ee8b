#!/usr/bin/env bash
# Build the GPU machine's payload on a machine with an index (the GPU machine has no network).
#
#   bash bench/gpu/pack.sh [VLLM]     # -> .stage/piece.NN + .stage/SHA256SUMS (git-ignored)
#
# VLLM (default 0.20.2; also VLLM_VERSION=) picks bench/gpu/site-VLLM.txt: vLLM and what its
# extraction path imports beyond the image. The torch 2.11 there runs vLLM 0.20.0-0.26.0
# (../shared/gpu/README.md); a list exists for 0.20.2 and 0.26.0.
#
# What goes in (one xz'd tar, cut into pieces that fit one device call each):
#   site/          bench/gpu/site-VLLM.txt installed for CPython 3.12 manylinux x86_64 (--no-deps),
#                  trimmed of what neither a dense Llama nor a mixture-of-experts model loads on
#                  Hopper: FlashAttention 2 (imported under try/except in vLLM 0.20.2 and 0.26.0),
#                  xgrammar's static library (a build input), DeepGEMM's headers (JIT for FP8
#                  only) and its builds for other Pythons, vLLM 0.26's Rust frontend binary
#                  (vllm-rs, run only with VLLM_RUST_FRONTEND_PATH). vLLM's MoE kernels (_moe_C*,
#                  ~15 MB xz'd) stay: the benches extract from MoE models too (KEEP_MOE=0 trims them)
#   tf4/           bench/gpu/tf4.txt, for the train step's PYTHONPATH
#   cache/pypi/    harness's unpacked vllm 0.11.0 sources: the drift baseline, offline
#   speculators/   speculators' scripts/ at tag v0.3.0 (they are not in its wheel)
# and, where present here (issue 32: the speculators 0.9 pipeline in one staging):
#   serve-deps/    .serve-deps/*.whl: what `vllm serve` imports beyond the site (bench/gpu/serve-VLLM.txt)
#   spec09/        .spec09/*.whl: speculators 0.9.0's own environment (bench/gpu/serve09.py)
#   ssh-debs/      .ssh-debs/*.deb: OpenSSH for the box (bench/gpu/ssh/fetch.sh, up.sh)
#   vllm-X/        EXTRA_VLLM=X: a second vLLM release alone (--target folder, trimmed like the
#                  site), run from a wrapper interpreter that puts it in front of the site
# Env: SPECULATORS_REPO (a clone of vllm-project/speculators; else cloned from GitHub),
#      PIECE_MB (default 50: a piece and the working tree fit one call), PACK_DIR (scratch, default /tmp/harness-gpu-pack).
set -euo pipefail
cd "$(dirname "$0")/../.."
here=$PWD
work=${PACK_DIR:-/tmp/harness-gpu-pack}
piece_mb=${PIECE_MB:-50}
vllm=${1:-${VLLM_VERSION:-0.20.2}}
[ -f "bench/gpu/site-$vllm.txt" ] || { echo "no bench/gpu/site-$vllm.txt: lists exist for $(ls bench/gpu/site-*.txt | sed 's/.*site-//;s/.txt//' | tr '\n' ' ')"; exit 2; }
plat=()
for n in 17 24 26 27 28 31 34 35 39; do plat+=(--platform "manylinux_2_${n}_x86_64"); done
plat+=(--platform manylinux2014_x86_64 --platform manylinux1_x86_64)
py312=(--python-version 3.12 --implementation cp --only-binary=:all: "${plat[@]}")

rm -rf "$work/root" && mkdir -p "$work/wheels/site" "$work/wheels/tf4" "$work/root"
for part in site tf4; do
    list="bench/gpu/$part.txt"; [ "$part" = site ] && list="bench/gpu/site-$vllm.txt"
    grep -v '^#' "$list" | grep . > "$work/$part.req"
    python3 -m pip download -q --no-deps "${py312[@]}" -d "$work/wheels/$part" -r "$work/$part.req"
    python3 -m pip install -q --no-deps --no-compile --disable-pip-version-check --ignore-requires-python "${py312[@]}" \
        --target "$work/root/$part" "$work/wheels/$part"/*.whl
    rm -rf "$work/root/$part/bin"
done
s="$work/root/site"
rm -f "$s/xgrammar/lib/libxgrammar.a"
[ "${KEEP_MOE:-1}" = 1 ] || rm -f "$s"/vllm/_moe_C*.so

trim() {  # what neither a dense Llama nor an MoE model loads on Hopper (above)
    rm -f "$1/vllm/vllm_flash_attn/_vllm_fa2_C.abi3.so" "$1/vllm/vllm-rs"
    find "$1/vllm/third_party/deep_gemm" -name '_C.cpython-*.so' ! -name '_C.cpython-312-*' -delete 2>/dev/null || true
    rm -rf "$1/vllm/third_party/deep_gemm/include"
}
trim "$s"
if [ -n "${EXTRA_VLLM:-}" ]; then
    python3 -m pip download -q --no-deps "${py312[@]}" -d "$work/wheels/extra" "vllm==$EXTRA_VLLM"
    python3 -m pip install -q --no-deps --no-compile --disable-pip-version-check --ignore-requires-python "${py312[@]}" \
        --target "$work/root/vllm-$EXTRA_VLLM" "$work/wheels/extra/vllm-$EXTRA_VLLM-"*.whl
    rm -rf "$work/root/vllm-$EXTRA_VLLM/bin"
    trim "$work/root/vllm-$EXTRA_VLLM"
fi
for extra in serve-deps:.serve-deps spec09:.spec09 ssh-debs:.ssh-debs; do
    src="$here/${extra#*:}"
    [ -d "$src" ] && mkdir -p "$work/root/${extra%%:*}" && cp "$src"/* "$work/root/${extra%%:*}/"
done

# the drift baseline as harness caches it (sources + dist-info only, read-only)
cache=${HARNESS_CACHE:-$HOME/.cache/harness}
[ -f "$cache/pypi/vllm-0.11.0/.complete" ] \
    || python3 -m harness probe vllm -t pypi:vllm==0.11.0 >/dev/null
mkdir -p "$work/root/cache/pypi"
cp -a "$cache/pypi/vllm-0.11.0" "$work/root/cache/pypi/"

repo=${SPECULATORS_REPO:-$work/speculators.git}
[ -d "$repo" ] || git clone -q --bare https://github.com/vllm-project/speculators "$repo"
mkdir -p "$work/root/speculators"
git --git-dir="$repo" archive v0.3.0 scripts | tar -x -C "$work/root/speculators"

mkdir -p "$here/.stage" && rm -f "$here/.stage"/piece.* "$here/.stage/SHA256SUMS"
tar -C "$work/root" -cf - . | xz -T0 -6 > "$work/payload.tar.xz"
split -b "${piece_mb}M" -d "$work/payload.tar.xz" "$here/.stage/piece."
(cd "$here/.stage" && sha256sum piece.* > SHA256SUMS)
echo "$vllm" > "$here/.stage/VLLM"  # stage.sh --install says which vLLM it installed
du -sh "$work/root"/* "$work/payload.tar.xz"
ls -l "$here/.stage"
