#!/usr/bin/env bash
# On the GPU machine: one device call per payload piece (bench/gpu/pack.sh made them here).
#
#   bash bench/gpu/stage.sh             # keep the carried piece(s) in /root/stage, sha256-checked
#   bash bench/gpu/stage.sh --install   # the last call: every piece present? reassemble, unpack,
#                                       # install into the image's Python, then harness itself
#
# A machine given back between calls comes back bare: --install then finds pieces missing,
# names them and exits 3, and the staging starts again from the first piece.
set -euo pipefail
stage=${STAGE_DIR:-/root/stage}
pack=${PACK_DIR:-/root/pack}
mkdir -p "$stage"
cp .stage/SHA256SUMS "$stage/"
for f in .stage/piece.*; do
    [ -f "$f" ] && cp "$f" "$stage/" && echo "staged $(basename "$f")"
done
cd "$stage"
missing=()
while read -r sum name; do
    if [ ! -f "$name" ]; then missing+=("$name"); continue; fi
    echo "$sum  $name" | sha256sum -c --quiet - || { echo "BAD $name"; rm -f "$name"; exit 4; }
done < SHA256SUMS
echo "present: $(ls piece.* | tr '\n' ' ')"
[ "${1:-}" = "--install" ] || exit 0
if [ "${#missing[@]}" -gt 0 ]; then
    echo "MISSING ${missing[*]}: the machine was recycled; stage again from the first piece"
    exit 3
fi
t0=$(date +%s)
rm -rf "$pack" && mkdir -p "$pack"
cat $(awk '{print $2}' SHA256SUMS) | xz -d -T0 | tar -x -C "$pack"
site=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
cp -a "$pack/site/." "$site/"
mkdir -p "$HOME/.cache/harness/pypi" && cp -a "$pack/cache/pypi/." "$HOME/.cache/harness/pypi/"
if [ -d "$pack/serve-deps" ]; then  # what `vllm serve` needs beyond the site
    python3 -m pip install -q --no-index --no-deps --no-compile --disable-pip-version-check "$pack"/serve-deps/*.whl
fi
for extra in "$pack"/vllm-*; do  # a second vLLM release: its own folder, in front of the site
    [ -d "$extra" ] || continue
    v=${extra##*/vllm-}
    mkdir -p "/root/vllm-$v-env/bin"
    printf '#!/bin/sh\nPYTHONPATH=%s${PYTHONPATH:+:$PYTHONPATH} exec %s "$@"\n' "$extra" "$(command -v python3)" \
        > "/root/vllm-$v-env/bin/python" && chmod +x "/root/vllm-$v-env/bin/python"
    echo "vLLM $v: /root/vllm-$v-env/bin/python ($(/root/vllm-$v-env/bin/python -c 'from importlib.metadata import version; print(version("vllm"))'))"
done
cd - >/dev/null
if ! python3 -m pip install -q --no-index --no-deps --no-build-isolation --disable-pip-version-check .; then
    # no build backend there: run harness from this checkout instead (probes/ beside it)
    printf '#!/bin/sh\nPYTHONPATH=%s${PYTHONPATH:+:$PYTHONPATH} exec python3 -m harness "$@"\n' "$PWD" \
        > /usr/local/bin/harness && chmod +x /usr/local/bin/harness
    echo "pip could not build harness; /usr/local/bin/harness runs it from $PWD"
fi
echo "installed into $site in $(( $(date +%s) - t0 )) s: $(harness --version 2>/dev/null || echo harness) at $(command -v harness)"
