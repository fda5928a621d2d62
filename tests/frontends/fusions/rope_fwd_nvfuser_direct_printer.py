# Rotary embedding forward (rotate_half) as nvFuser's direct-bindings repro
# printer writes it: slice bounds left by nvFuser's slice normalization as
# scalar ops on fd.ops.size results (end = max(start, min(extent, stop))),
# manual_normalization=True and manual_padding=True as booleans, cos / sin
# [T, D] reaching [B, H, T, D] through fd.ops.broadcast and fd.ops.expand.
# bf16 q [B, H, T, D], float math, bf16 out.
# small: 2048->16, 32->4, 128->128, 64->64
# expect: compiles
import torch
from nvfuser_direct import FusionDefinition, DataType
def nvfuser_fusion(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[-1, -1, -1, -1], contiguity=[True, True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[3, 2, 1, 0])
    tv1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    tv2 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    i3 = fd.ops.size(tv0, dim=0)
    i4 = fd.ops.size(tv0, dim=1)
    i5 = fd.ops.size(tv0, dim=2)
    i6 = fd.ops.size(tv0, dim=3)
    i7 = fd.ops.minimum(i6, 64)
    tv8 = fd.ops.slice(tv0, start_indices=[0, 0, 0, 0], end_indices=[i3, i4, i5, i7], strides=[1, 1, 1, 1], manual_normalization=True)
    i9 = fd.ops.minimum(i6, 128)
    i10 = fd.ops.maximum(64, i9)
    tv11 = fd.ops.slice(tv0, start_indices=[0, 0, 0, 64], end_indices=[i3, i4, i5, i10], strides=[1, 1, 1, 1], manual_normalization=True)
    tv12 = fd.ops.cast(tv11, dtype=DataType.Float)
    tv13 = fd.ops.neg(tv12)
    tv14 = fd.ops.cast(tv13, dtype=DataType.BFloat16)
    tv15 = fd.ops.cat([tv14, tv8], dim=3, manual_padding=True)
    tv16 = fd.ops.broadcast(tv1, is_broadcast_dim=[True, True, False, False])
    tv17 = fd.ops.expand(tv16, shape=[i3, i4, i5, i6])
    tv18 = fd.ops.broadcast(tv2, is_broadcast_dim=[True, True, False, False])
    tv19 = fd.ops.expand(tv18, shape=[i3, i4, i5, i6])
    tv20 = fd.ops.cast(tv0, dtype=DataType.Float)
    tv21 = fd.ops.cast(tv17, dtype=DataType.Float)
    tv22 = fd.ops.mul(tv20, tv21)
    tv23 = fd.ops.cast(tv15, dtype=DataType.Float)
    tv24 = fd.ops.cast(tv19, dtype=DataType.Float)
    tv25 = fd.ops.mul(tv23, tv24)
    tv26 = fd.ops.add(tv22, tv25)
    tv27 = fd.ops.cast(tv26, dtype=DataType.BFloat16)
    fd.add_output(tv27)
with FusionDefinition() as fd:
    nvfuser_fusion(fd)

inputs = [
    torch.testing.make_tensor((2, 32, 2048, 128), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((2048, 128), dtype=torch.bfloat16, device='cuda:0', low=-1, high=1),
    torch.testing.make_tensor((2048, 128), dtype=torch.bfloat16, device='cuda:0', low=-1, high=1),
]
fd.execute(inputs)
