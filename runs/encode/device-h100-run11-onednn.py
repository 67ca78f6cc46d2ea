"""Device run 11: which oneDNN kernels torch 2.11 picks on the H100 host's Xeon for the int8 product
(``torch._int_mm``, as ``encode.int8``) and the bf16 one (fp32's screening), one thread. Run as
``ONEDNN_VERBOSE=1 python3 runs/encode/device-h100-run11-onednn.py``; its output is device-h100-run11-onednn.txt."""
import torch
a8 = torch.randint(-127, 128, (4096, 128), dtype=torch.int8); b8 = torch.randint(-127, 128, (128, 240), dtype=torch.int8)
torch.set_num_threads(1)
for i in range(2):
    torch._int_mm(a8, b8)
print("--- bf16", flush=True)
for i in range(2):
    a8.bfloat16() @ b8.bfloat16()
print("--- fp32", flush=True)
a8.float() @ b8.float()
