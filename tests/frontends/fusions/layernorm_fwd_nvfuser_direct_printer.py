# LayerNorm forward in the form nvFuser's direct-bindings repro printer
# (nvfuser_direct) writes: it prints the fusion's own IR, so var_mean is
# fd.ops.welford (mean, var_sum, count) followed by var_sum / max(count -
# correction, 0) in scalar ops on fd.ops.size results, keepdim as
# fd.ops.broadcast, the broadcast to the full shape as fd.ops.expand to
# size scalars, and constants inline. bf16 [T, D] with weight and bias.
# expect: compiles
import torch
from nvfuser_direct import FusionDefinition, DataType
def nvfuser_fusion(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    tv1 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[0])
    tv2 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[0])
    tv3 = fd.ops.cast(tv0, dtype=DataType.Float)
    tv4, tv5, tv6 = fd.ops.welford(tv3, dims=[1])
    i7 = fd.ops.size(tv0, dim=1)
    d8 = fd.ops.mul(1.00000, i7)
    d9 = fd.ops.sub(d8, 0)
    b10 = fd.ops.ge(d9, 0)
    d11 = fd.ops.where(b10, d9, 0)
    d12 = fd.ops.reciprocal(d11)
    tv13 = fd.ops.mul(tv5, d12)
    tv14 = fd.ops.broadcast(tv13, is_broadcast_dim=[False, True])
    tv15 = fd.ops.broadcast(tv4, is_broadcast_dim=[False, True])
    tv16 = fd.ops.add(tv14, 1.00000e-05)
    tv17 = fd.ops.rsqrt(tv16)
    i18 = fd.ops.size(tv0, dim=0)
    tv19 = fd.ops.expand(tv15, shape=[i18, i7])
    tv20 = fd.ops.sub(tv3, tv19)
    tv21 = fd.ops.expand(tv17, shape=[i18, i7])
    tv22 = fd.ops.mul(tv20, tv21)
    tv23 = fd.ops.cast(tv1, dtype=DataType.Float)
    tv24 = fd.ops.broadcast(tv23, is_broadcast_dim=[True, False])
    tv25 = fd.ops.expand(tv24, shape=[i18, i7])
    tv26 = fd.ops.mul(tv22, tv25)
    tv27 = fd.ops.cast(tv2, dtype=DataType.Float)
    tv28 = fd.ops.broadcast(tv27, is_broadcast_dim=[True, False])
    tv29 = fd.ops.expand(tv28, shape=[i18, i7])
    tv30 = fd.ops.add(tv26, tv29)
    tv31 = fd.ops.cast(tv30, dtype=DataType.BFloat16)
    fd.add_output(tv31)
    fd.add_output(tv15)
    fd.add_output(tv17)
with FusionDefinition() as fd:
    nvfuser_fusion(fd)

inputs = [
    torch.testing.make_tensor((8192, 4096), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((4096,), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((4096,), dtype=torch.bfloat16, device='cuda:0'),
]
fd.execute(inputs)
