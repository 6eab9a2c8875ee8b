#!/usr/bin/env bash
# On the GPU machine (no sshd, no network): OpenSSH's server from the debs fetch.sh downloaded,
# unpacked into STATE (never over /), on 127.0.0.1 only, with keys made for this run.
#
#   bash bench/gpu/ssh/up.sh DEBS STATE [PORT]    # PORT: default a free one
#   bash bench/gpu/ssh/down.sh STATE
#
# Leaves in STATE: root/ (the unpacked debs), lib/ (symlinks to the unpacked libraries this
# image lacks, for sshd and ssh-keygen only), host_ed25519 and client_ed25519 (+ .pub),
# authorized_keys, sshd_config, sshd.pid, sshd.log, known_hosts ("[127.0.0.1]:PORT ssh-ed25519
# ...": harness verifies the host key), hosts.toml (host `gpu`), port, env.txt (what an SSH
# session's environment holds).
#
# Env: HOST_PYTHON (the host's `python =`; default /opt/torch/.venv/bin/python if it exists,
# else python3 on PATH), HOST_WORKDIR (default /root/e2e, the e2e's), HOST_ENV (a TOML inline
# table for the host's `env =`, e.g. '{ HF_HUB_OFFLINE = "1" }'), HOST_USER (default: who runs
# this), UP_PRETEND_MISSING (sonames to expose from the debs even if the image has them: tries
# the lib/ path on a machine that lacks nothing).
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: up.sh DEBS STATE [PORT]" >&2; exit 2; }
debs=$(cd "$1" && pwd)
mkdir -p "$2"
state=$(cd "$2" && pwd)   # absolute: sshd re-executes itself by its own path
port=${3:-}
say() { echo "up.sh: $*"; }
die() { echo "up.sh: $*" >&2; exit 1; }

if [ -f "$state/sshd.pid" ] && kill -0 "$(cat "$state/sshd.pid")" 2>/dev/null; then
    die "an sshd from $state already runs (pid $(cat "$state/sshd.pid")): bash bench/gpu/ssh/down.sh $state"
fi
rm -rf "$state/root" "$state/lib"
mkdir -p "$state/root" "$state/lib"
n=0
for d in "$debs"/*.deb; do dpkg -x "$d" "$state/root"; n=$((n + 1)); done
[ "$n" -gt 0 ] || die "no .deb in $debs (run bench/gpu/ssh/fetch.sh where apt works)"
sshd=$state/root/usr/sbin/sshd
keygen=$state/root/usr/bin/ssh-keygen
ssh=$state/root/usr/bin/ssh
[ -x "$sshd" ] && [ -x "$keygen" ] || die "no sshd/ssh-keygen in the debs of $debs"

# -- the shared libraries this image lacks: ldd's "not found", to a fixed point (a library
#    found only in the debs can need another the image lacks too)
find_lib() {  # soname -> a file of that name in the unpacked debs
    local hit
    for dir in lib/x86_64-linux-gnu usr/lib/x86_64-linux-gnu lib usr/lib; do
        hit="$state/root/$dir/$1"
        [ -e "$hit" ] && { echo "$hit"; return 0; }
    done
    return 1
}
for so in ${UP_PRETEND_MISSING:-}; do
    f=$(find_lib "$so") || die "UP_PRETEND_MISSING: $so is not in the debs"
    ln -sf "$f" "$state/lib/$so"
done
bins=("$sshd" "$keygen" "$ssh")
for _round in 1 2 3 4 5 6 7 8; do
    missing=$(for b in "${bins[@]}"; do LD_LIBRARY_PATH=$state/lib ldd "$b"; done \
        | awk '/not found/ {print $1}' | sort -u)
    [ -z "$missing" ] && break
    for so in $missing; do
        f=$(find_lib "$so") || die "$so: the image lacks it and no deb in $debs has it (add its package to fetch.sh)"
        ln -sf "$f" "$state/lib/$so"
    done
done
[ -z "$missing" ] || die "still missing after 8 rounds: $missing"
exposed=$(ls "$state/lib")
if [ -n "$exposed" ]; then
    say "exposed from the debs (the image lacks them${UP_PRETEND_MISSING:+, or UP_PRETEND_MISSING}): $(echo $exposed)"
    libenv=(env "LD_LIBRARY_PATH=$state/lib")
else
    say "the image has every library sshd/ssh-keygen/ssh link against: no LD_LIBRARY_PATH"
    libenv=(env)
fi
"${libenv[@]}" "$sshd" -V 2>&1 | head -1 | sed 's/^/up.sh: sshd: /' || true

# -- privilege separation: user sshd and its empty chroot dir (Debian's sshd uses /run/sshd)
if ! getent passwd sshd >/dev/null; then
    if command -v useradd >/dev/null; then
        useradd --system --no-create-home --home-dir /run/sshd --shell /usr/sbin/nologin sshd
    else
        echo "sshd:x:$(( 60000 + RANDOM % 1000 )):65534::/run/sshd:/usr/sbin/nologin" >> /etc/passwd
    fi
    say "created user sshd (privilege separation): $(getent passwd sshd)"
fi
if [ ! -d /run/sshd ]; then
    mkdir -p -m 0755 /run/sshd
    say "created /run/sshd (privilege separation)"
fi
user=${HOST_USER:-$(id -un)}
# sshd without PAM refuses a locked account ("!" in shadow): say so rather than fail at auth
if [ -r /etc/shadow ] && awk -F: -v u="$user" '$1 == u && $2 ~ /^!/ {f=1} END {exit !f}' /etc/shadow; then
    cp /etc/shadow "$state/shadow.orig"
    usermod -p '*' "$user"
    say "$user's password field was locked ('!'); sshd (UsePAM no) refuses locked accounts: set to '*' (no password login either way; was saved to $state/shadow.orig)"
fi

# -- keys for this run
rm -f "$state"/host_ed25519* "$state"/client_ed25519*
"${libenv[@]}" "$keygen" -q -t ed25519 -N '' -C "harness-gpu-host" -f "$state/host_ed25519"
"${libenv[@]}" "$keygen" -q -t ed25519 -N '' -C "harness-gpu-client" -f "$state/client_ed25519"
cp "$state/client_ed25519.pub" "$state/authorized_keys"
chmod 600 "$state/authorized_keys"

if [ -z "$port" ]; then
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
fi
cat > "$state/sshd_config" <<CONF
# written by bench/gpu/ssh/up.sh
Port $port
ListenAddress 127.0.0.1
HostKey $state/host_ed25519
PidFile $state/sshd.pid
AuthorizedKeysFile $state/authorized_keys
# STATE may sit under a world-writable /tmp, which StrictModes refuses for authorized_keys
StrictModes no
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
UsePAM no
UseDNS no
PrintMotd no
PrintLastLog no
X11Forwarding no
MaxStartups 100:30:200
MaxSessions 100
LogLevel VERBOSE
# in-process: the user's session env (no LD_LIBRARY_PATH) could not load the debs' libraries
Subsystem sftp internal-sftp
CONF
"${libenv[@]}" "$sshd" -t -f "$state/sshd_config" || die "sshd rejected $state/sshd_config"
rm -f "$state/sshd.pid"
# daemonises (its listener writes PidFile); -E: its log to a file
"${libenv[@]}" "$sshd" -f "$state/sshd_config" -E "$state/sshd.log"
banner=$(python3 - "$port" <<'PY'
import socket, sys, time
deadline = time.monotonic() + 15
while time.monotonic() < deadline:
    try:
        with socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=1) as s:
            line = s.recv(128)
            if line.startswith(b"SSH-"):
                print(line.decode().strip()); sys.exit(0)
    except OSError:
        time.sleep(0.05)
sys.exit(1)
PY
) || { tail -20 "$state/sshd.log" >&2; die "sshd did not answer on 127.0.0.1:$port within 15 s"; }
for _ in $(seq 50); do [ -s "$state/sshd.pid" ] && break; sleep 0.1; done
echo "$port" > "$state/port"
say "sshd pid $(cat "$state/sshd.pid") on 127.0.0.1:$port ($banner), log $state/sshd.log"

echo "[127.0.0.1]:$port $(cut -d' ' -f1,2 "$state/host_ed25519.pub")" > "$state/known_hosts"
chmod 600 "$state/known_hosts"
python=${HOST_PYTHON:-}
if [ -z "$python" ]; then
    if [ -x /opt/torch/.venv/bin/python ]; then python=/opt/torch/.venv/bin/python; else python=$(command -v python3); fi
fi
workdir=${HOST_WORKDIR:-/root/e2e}
{
    echo "# written by bench/gpu/ssh/up.sh: the unpacked sshd on 127.0.0.1:$port"
    echo "[hosts.gpu]"
    echo "address = \"127.0.0.1\""
    echo "port = $port"
    echo "user = \"$user\""
    echo "identity = \"$state/client_ed25519\""
    echo "known_hosts = \"$state/known_hosts\""
    echo "python = \"$python\""
    echo "workdir = \"$workdir\""
    [ -n "${HOST_ENV:-}" ] && echo "env = $HOST_ENV"
} > "$state/hosts.toml"
say "wrote $state/hosts.toml (host gpu: $user@127.0.0.1:$port, python $python, workdir $workdir)"

# -- an SSH session's environment: sshd builds it afresh, so sshd's LD_LIBRARY_PATH (the debs'
#    libraries) must not reach the user's commands (it would change what their Python loads)
if [ -x "$ssh" ]; then
    "${libenv[@]}" "$ssh" -F /dev/null -p "$port" -i "$state/client_ed25519" \
        -o UserKnownHostsFile="$state/known_hosts" -o StrictHostKeyChecking=yes \
        -o BatchMode=yes -o ConnectTimeout=10 "$user@127.0.0.1" env > "$state/env.txt" \
        || die "ssh $user@127.0.0.1 -p $port env failed: see $state/sshd.log"
    if grep -q "^LD_LIBRARY_PATH=.*$state/lib" "$state/env.txt"; then
        die "an SSH session inherits sshd's LD_LIBRARY_PATH ($(grep ^LD_LIBRARY_PATH= "$state/env.txt"))"
    fi
    say "ssh session env: $(grep -c . "$state/env.txt") variables, LD_LIBRARY_PATH $(grep -q ^LD_LIBRARY_PATH= "$state/env.txt" && grep ^LD_LIBRARY_PATH= "$state/env.txt" || echo unset) (sshd's: ${libenv[1]:-unset}); $(grep ^PATH= "$state/env.txt")"
fi
