"""Issue 41 fp32 gap: which lever moves the worker-process GPU pipeline (switch interval, pinned copies, depth).

Device run 8, as it ran (code at 2dae3f0, whose ``SparseEncoder._to_device`` pinned each batch; "base" is that code,
"nopin" the plain blocking copies committed after it). From the repository root there, with work/device holding the
20,000 passages and the model folder (scripts/prepare_device_encode.sh) and orjson importable:
``python3 runs/encode/device-h100-run8-levers.py``; output device-h100-run8-levers.json."""
import json, os, time, types
from pathlib import Path
import torch
from scripts.bench.encode_speed import end_to_end
from scripts.bench.encode_device import _configure
from scripts.bench.encode_speed import read_passages
from lsr_lucene.encode.encoder import SparseEncoder

out = Path(os.environ.get("OUT", "work/exp-out")); out.mkdir(parents=True, exist_ok=True)
work = Path("/tmp/exp41"); work.mkdir(exist_ok=True)
N = int(os.environ.get("N", 20000)); DEV = os.environ.get("DEV", "cuda"); W = int(os.environ.get("W", 8))
docs = read_passages(Path("work/device/wiki20k.jsonl"), N)
results = {}

def plain_to_device(self, input_ids, mask):
    return torch.from_numpy(input_ids).to(self.device), torch.from_numpy(mask).to(self.device)

def devmask_to_device(self, input_ids, mask):
    lengths = torch.from_numpy(mask.sum(axis=1)).to(self.device)
    ids = torch.from_numpy(input_ids)
    ids = ids.pin_memory().to(self.device, non_blocking=True) if self.device.type == "cuda" else ids
    return ids, (torch.arange(ids.shape[1], device=self.device)[None, :] < lengths[:, None]).to(torch.int64)

def run(dtype, variants, repeats=3):
    enc = SparseEncoder("work/device/splade-tiny", max_length=256, dtype=dtype, device=DEV, device_quantise=True)
    _configure(enc, W, 4)
    end_to_end(enc, docs[:min(2048, N)], 256, work / "warm")
    best = {}
    for _ in range(repeats):
        for name, setup in variants.items():
            enc.switch_interval, enc._pipeline.depth = 1e-4, 4
            enc.__dict__.pop("_to_device", None)
            setup(enc)
            enc._pipeline.seconds.clear()
            s = end_to_end(enc, docs, 256, work / f"{dtype}-{name}")
            st = {k: round(v, 3) for k, v in enc._pipeline.seconds.items()}
            if s < best.get(name, (1e9,))[0]:
                best[name] = (s, st)
            print(dtype, name, round(s, 3), round(len(docs) / s), st, flush=True)
    enc.close()
    for name, (s, st) in best.items():
        results[f"{dtype} {name}"] = {"seconds": round(s, 3), "passages_per_s": round(len(docs) / s), "stages": st}

fp32 = {
    "base": lambda e: None,
    "sw1e-5": lambda e: setattr(e, "switch_interval", 1e-5),
    "sw1e-3": lambda e: setattr(e, "switch_interval", 1e-3),
    "nopin": lambda e: setattr(e, "_to_device", types.MethodType(plain_to_device, e)),
    "nopin+sw1e-5": lambda e: (setattr(e, "_to_device", types.MethodType(plain_to_device, e)),
                               setattr(e, "switch_interval", 1e-5)),
    "devmask": lambda e: setattr(e, "_to_device", types.MethodType(devmask_to_device, e)),
    "d2": lambda e: setattr(e._pipeline, "depth", 2),
    "d8": lambda e: setattr(e._pipeline, "depth", 8),
}
t0 = time.time()
run("fp32", fp32)
run("bf16", {k: fp32[k] for k in ("base", "sw1e-5", "nopin")}, repeats=2)
results["torch"] = torch.__version__; results["gpu"] = torch.cuda.get_device_name(0) if DEV == "cuda" else DEV
results["seconds"] = round(time.time() - t0, 1)
(out / "exp41.json").write_text(json.dumps(results, indent=1))
print(json.dumps({k: v if not isinstance(v, dict) else v["passages_per_s"] for k, v in results.items()}, indent=1))
