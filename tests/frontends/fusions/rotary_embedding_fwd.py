# Rotary position embedding (LitGPT/Thunder): the head dimension split in
# halves with fd.ops.slice, rotate_half as cat([-x2, x1]), then
# x * cos + rotate_half(x) * sin with cos / sin [S, D] broadcast.
# expect: compiles
# small: 2048->16
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id37(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[2, 32, 2048, 128], contiguity=[True, True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[3, 2, 1, 0])
    T1 = fd.define_tensor(shape=[2048, 128], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T2 = fd.define_tensor(shape=[2048, 128], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T3 = fd.ops.slice(T0, start_indices=[0, 0, 0, 0], end_indices=[2, 32, 2048, 64], strides=[1, 1, 1, 1], manual_normalization=0)
    T4 = fd.ops.slice(T0, start_indices=[0, 0, 0, 64], end_indices=[2, 32, 2048, 128], strides=[1, 1, 1, 1], manual_normalization=0)
    T5 = fd.ops.cast(T4, dtype=DataType.Float)
    T6 = fd.ops.neg(T5)
    T7 = fd.ops.cast(T6, dtype=DataType.BFloat16)
    T8 = fd.ops.cat([T7, T3], dim=-1, manual_padding=0)
    T9 = fd.ops.broadcast_in_dim(T1, shape=[2, 32, 2048, 128], broadcast_dims=[2, 3])
    T10 = fd.ops.broadcast_in_dim(T2, shape=[2, 32, 2048, 128], broadcast_dims=[2, 3])
    T11 = fd.ops.cast(T0, dtype=DataType.Float)
    T12 = fd.ops.cast(T9, dtype=DataType.Float)
    T13 = fd.ops.mul(T11, T12)
    T14 = fd.ops.cast(T8, dtype=DataType.Float)
    T15 = fd.ops.cast(T10, dtype=DataType.Float)
    T16 = fd.ops.mul(T14, T15)
    T17 = fd.ops.add(T13, T16)
    T18 = fd.ops.cast(T17, dtype=DataType.BFloat16)
    fd.add_output(T18)


with FusionDefinition() as fd:
    nvfuser_fusion_id37(fd)

inputs = [
    torch.testing.make_tensor((2, 32, 2048, 128), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((2048, 128), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((2048, 128), dtype=torch.bfloat16, device='cuda:0'),
]
fd.execute(inputs)
