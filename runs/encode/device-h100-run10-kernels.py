"""Issue 41 item 1 on AMX: which CPU kernels project 240 positions x 128 hidden onto 30,522 terms fast (one thread),
and the throughput of 16 threads doing it at once.

Device run 10 (``python3 runs/encode/device-h100-run10-kernels.py``, torch only; random values, only shapes matter):
output device-h100-run10-kernels.json."""
import json, os, threading, time
import torch

torch.manual_seed(0)
L, H, V = 240, 128, 30522
res = {"torch": torch.__version__, "capability": torch.backends.cpu.get_cpu_capability(),
       "engines": torch.backends.quantized.supported_engines,
       "onednn": [l.strip() for l in torch.__config__.show().splitlines() if "oneDNN" in l or "CPU capability" in l]}
s8 = torch.randint(-127, 128, (L, H), dtype=torch.int8); w8 = torch.randint(-127, 128, (V, H), dtype=torch.int8)
s32, w32 = s8.float(), w8.float()
sbf, wbf = s32.bfloat16(), w32.bfloat16()

def blocks(t, c): return [t[i:i + c].contiguous() for i in range(0, V, c)]
cols8 = s8.T.contiguous()
variants = {}
for c in (512, 2048, 4096, 8192):
    b8 = blocks(w8, c)
    out = torch.empty((c, L), dtype=torch.int32)
    def f(b8=b8, out=out):
        for b in b8:
            o = out[:len(b)]; torch._int_mm(b, cols8, out=o); o.amax(dim=1)
    variants[f"int8 terms x pos c{c} +pool"] = f
    def g(b8=b8, out=out):
        for b in b8:
            torch._int_mm(b, cols8, out=out[:len(b)])
    variants[f"int8 product only c{c}"] = g
for c in (1024, 4096):
    bb = blocks(wbf, c)
    def h(bb=bb):
        for b in bb:
            (sbf @ b.T).amax(dim=0)
    variants[f"bf16 pos x terms c{c} +pool"] = h
    bt = [b.contiguous() for b in bb]
    def h2(bt=bt):
        for b in bt:
            (b @ sbf.T).amax(dim=1)
    variants[f"bf16 terms x pos c{c} +pool"] = h2
b32 = blocks(w32, 4096)
def ff():
    for b in b32:
        (s32 @ b.T).amax(dim=0)
variants["fp32 c4096 +pool"] = ff
for engine in res["engines"]:
    if engine == "none":
        continue
    try:
        torch.backends.quantized.engine = engine
        lin = torch.ao.nn.quantized.dynamic.Linear(H, V)
        qw = torch.quantize_per_channel(w32 / 127, torch.ones(V) / 127, torch.zeros(V, dtype=torch.long), 0, torch.qint8)
        lin.set_weight_bias(qw, torch.zeros(V))
        def q(lin=lin, engine=engine):
            torch.backends.quantized.engine = engine
            lin(s32).amax(dim=0)
        q(); variants[f"dynamic quantized linear ({engine}) +pool"] = q
    except Exception as e:
        res[f"error {engine}"] = repr(e)[:200]

torch.set_num_threads(1)
best = {}
with torch.inference_mode():
    for _ in range(5):
        for name, f in variants.items():
            f(); t = time.perf_counter(); f(); best[name] = min(best.get(name, 9e9), time.perf_counter() - t)
res["one_thread_ms"] = {k: round(v * 1e3, 3) for k, v in best.items()}
# 16 threads at once, one torch thread each (as the CPU encoder's batches): texts per second in total
n = os.cpu_count()
def many(f, seconds=2.0):
    counts = [0] * n
    stop = time.perf_counter() + seconds
    def work(i):
        with torch.inference_mode():
            while time.perf_counter() < stop:
                f(); counts[i] += 1
    ts = [threading.Thread(target=work, args=(i,)) for i in range(n)]
    [t.start() for t in ts]; [t.join() for t in ts]
    return round(sum(counts) / seconds, 1)
res[f"{n}_threads_texts_per_s"] = {k: many(variants[k]) for k in
    ["int8 terms x pos c4096 +pool", "int8 terms x pos c512 +pool", "bf16 pos x terms c4096 +pool",
     "bf16 terms x pos c1024 +pool", "fp32 c4096 +pool"] + [k for k in variants if k.startswith("dynamic")]}
print(json.dumps(res, indent=1))
out = os.environ.get("OUT")
if out:
    open(os.path.join(out, "amx_micro.json"), "w").write(json.dumps(res, indent=1))
