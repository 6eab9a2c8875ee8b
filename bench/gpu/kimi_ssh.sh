#!/usr/bin/env bash
# On the GPU machine: bench/gpu/kimi.py driven over SSH, as the seed drives its box -- every
# harness command of the phase through the hosts.toml host `gpu` (sshd from bench/gpu/ssh/up.sh
# on 127.0.0.1, keys made for this run, the host key verified, the kept connection on).
#
#   bash bench/gpu/kimi_ssh.sh extract|train     # after stage.sh --install and apply-patches
#
# The first call brings sshd up (state in $SSH_STATE, default /root/ssh-state-kimi; debs in
# $SSH_DEBS, default .ssh-debs here); a later call finds it running. The host's env carries
# what the steps need here and an SSH session does not inherit: the image's PATH and CUDA
# variables, HF offline, and VLLM_USE_FLASHINFER_SAMPLER=0 (the payload has no FlashInfer).
set -euo pipefail
cd "$(dirname "$0")/../.."
phase=${1:?usage: kimi_ssh.sh extract|train}
state=${SSH_STATE:-/root/ssh-state-kimi}
debs=${SSH_DEBS:-.ssh-debs}
py=$(command -v python3)
if ! { [ -f "$state/sshd.pid" ] && kill -0 "$(cat "$state/sshd.pid")" 2>/dev/null; }; then
    HOST_ENV=$("$py" - <<'PY'
import json, os
keys = ("PATH", "LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH", "LIBRARY_PATH", "CUDA_VISIBLE_DEVICES",
        "NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES", "TRITON_CACHE_DIR", "HF_HOME")
env = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
       "VLLM_USE_FLASHINFER_SAMPLER": "0"}
env.update({k: os.environ[k] for k in keys if os.environ.get(k)})
print("{ " + ", ".join(f"{k} = {json.dumps(v)}" for k, v in env.items()) + " }")
PY
)
    HOST_PYTHON=$py HOST_WORKDIR=/root/vb HOST_ENV=$HOST_ENV bash bench/gpu/ssh/up.sh "$debs" "$state"
fi
export HARNESS_HOSTS=$state/hosts.toml VB_TARGET=gpu
harness hosts --check -t gpu
exec "$py" bench/gpu/kimi.py --e2e "$phase"
