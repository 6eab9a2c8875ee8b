#!/usr/bin/env bash
# Stop the sshd that up.sh started from STATE: its per-connection children (sshd processes
# under the listener), then the listener. The processes a session launched detached (harness's
# run supervisors) are not sshd's and are left alone.
#
#   bash bench/gpu/ssh/down.sh STATE
set -uo pipefail
[ $# -eq 1 ] || { echo "usage: down.sh STATE" >&2; exit 2; }
pidfile=$1/sshd.pid
[ -s "$pidfile" ] || { echo "down.sh: no $pidfile: nothing to stop"; exit 0; }
pid=$(cat "$pidfile")
if ! kill -0 "$pid" 2>/dev/null; then
    echo "down.sh: sshd $pid is not running"; rm -f "$pidfile"; exit 0
fi
# the listener's sshd descendants, from /proc (no procps needed)
kids=$(python3 - "$pid" <<'PY'
import os, sys
root = int(sys.argv[1])
parent = {}
for e in os.listdir("/proc"):
    if e.isdigit():
        try:
            stat = open(f"/proc/{e}/stat").read()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1 : stat.rindex(")")]
        parent[int(e)] = (int(stat.rpartition(")")[2].split()[1]), comm)
out, todo = [], [root]
while todo:
    p = todo.pop()
    for c, (pp, comm) in parent.items():
        if pp == p and comm.startswith("sshd"):
            out.append(c); todo.append(c)
print(" ".join(map(str, out)))
PY
)
kill -TERM "$pid" 2>/dev/null
for k in $kids; do kill -KILL "$k" 2>/dev/null; done
for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
rm -f "$pidfile"
echo "down.sh: stopped sshd $pid${kids:+ and its sessions $kids}"
