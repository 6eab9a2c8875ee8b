#!/usr/bin/env bash
# Here (Debian 12, with apt): download OpenSSH's server, client (ssh-keygen, ssh) and sftp-server
# and the library packages their binaries link against, for the GPU machine (no sshd, no
# network). Nothing is installed here: the debs are unpacked into a scratch folder only to ask
# ldd what they link against.
#
#   bash bench/gpu/ssh/fetch.sh [DIR]     # default DIR: .ssh-debs/ in the repo root (git-ignored)
#
# Then carry DIR to the device call (`carry: [".ssh-debs"]`, ~5 MB) and run bench/gpu/ssh/up.sh.
# glibc (libc6) is never taken: the image's own must be used. Every other library the binaries
# need (transitively) comes along; up.sh exposes only those the image lacks (ldd "not found").
set -euo pipefail
cd "$(dirname "$0")/../../.."
dir=${1:-.ssh-debs}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
rm -f "$dir"/*.deb
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
chmod 755 "$scratch"  # apt's _apt user downloads into the current folder
cd "$scratch"
main=(openssh-server openssh-client openssh-sftp-server)
# sshd links libwrap (TCP wrappers) -> libnsl -> libtirpc, which this machine may not have
# installed: ldd cannot resolve them here (the H200 run of 2026-12-02 found each missing there)
main+=(libwrap0 libnsl2 libtirpc3 libtirpc-common)
get() {  # apt-get download, without its warning that root downloads unsandboxed
    apt-get download -q "$@" 2> >(grep -v '^W: Download is performed unsandboxed' >&2)
}
get "${main[@]}"
mkdir root
for d in ./*.deb; do dpkg -x "$d" root; done
bins=(root/usr/sbin/sshd root/usr/bin/ssh-keygen root/usr/bin/ssh root/usr/lib/openssh/sftp-server)
# soname -> path as the loader here resolves it; the owning package from dpkg's database
# (usrmerge: a file may be registered under /lib or /usr/lib)
# the unpacked debs' own libraries first: what they provide needs no package from here
multi=x86_64-linux-gnu
export LD_LIBRARY_PATH="$PWD/root/lib/$multi:$PWD/root/usr/lib/$multi"
lines=$(for b in "${bins[@]}"; do ldd "$b"; done)
if grep -q "not found" <<<"$lines"; then
    echo "fetch.sh: unresolved: $(grep 'not found' <<<"$lines" | awk '{print $1}' | sort -u | tr '\n' ' ')(add their packages to main)" >&2
    exit 3
fi
libs=$(awk '$2 == "=>" && $3 ~ /^\// {print $3}' <<<"$lines" | grep -v "^$PWD/root/" | sort -u)
unset LD_LIBRARY_PATH
pkgs=()
for p in $libs; do
    real=$(readlink -f "$p")
    owner=""
    for cand in "$p" "$real" "${p#/usr}" "${real#/usr}" "/usr$p" "/usr$real"; do
        owner=$(dpkg -S "$cand" 2>/dev/null | head -1 | cut -d: -f1) && [ -n "$owner" ] && break
    done
    if [ -z "$owner" ]; then echo "fetch.sh: no package owns $p" >&2; exit 3; fi
    case "$owner" in libc6) continue ;; esac
    pkgs+=("$owner")
done
mapfile -t pkgs < <(printf '%s\n' "${pkgs[@]}" | sort -u)
get "${pkgs[@]}"
n=$(ls ./*.deb | wc -l)
[ "$n" -eq $(( ${#main[@]} + ${#pkgs[@]} )) ] || { echo "fetch.sh: $n debs for ${#main[@]} + ${#pkgs[@]} packages" >&2; exit 4; }
cp ./*.deb "$dir/"
ls "$dir"/*.deb | xargs -n1 basename | sed 's/_.*//' > "$dir/PACKAGES"
(cd "$dir" && sha256sum ./*.deb > SHA256SUMS)
echo "fetched $(ls "$dir"/*.deb | wc -l) debs ($(du -sh "$dir" | cut -f1)) into $dir:"
tr '\n' ' ' < "$dir/PACKAGES"; echo
