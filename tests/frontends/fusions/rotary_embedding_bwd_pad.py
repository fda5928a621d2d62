# Backward of rotate_half as Thunder differentiates cat and slice: the
# gradient halves taken with slice and put back in place with fd.ops.pad
# (widths from the last axis), summed, plus the x * cos path.
# expect: compiles
# small: 2048->16
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id38(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[2, 32, 2048, 128], contiguity=[True, True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[3, 2, 1, 0])
    T1 = fd.define_tensor(shape=[2048, 128], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T2 = fd.define_tensor(shape=[2048, 128], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T3 = fd.ops.cast(T0, dtype=DataType.Float)
    T4 = fd.ops.broadcast_in_dim(T2, shape=[2, 32, 2048, 128], broadcast_dims=[2, 3])
    T5 = fd.ops.cast(T4, dtype=DataType.Float)
    T6 = fd.ops.mul(T3, T5)
    T7 = fd.ops.slice(T6, start_indices=[0, 0, 0, 0], end_indices=[2, 32, 2048, 64], strides=[1, 1, 1, 1], manual_normalization=0)
    T8 = fd.ops.slice(T6, start_indices=[0, 0, 0, 64], end_indices=[2, 32, 2048, 128], strides=[1, 1, 1, 1], manual_normalization=0)
    T9 = fd.ops.neg(T7)
    S10 = fd.define_scalar(0.00000, dtype=DataType.Double)
    T11 = fd.ops.pad(T9, [64, 0, 0, 0, 0, 0, 0, 0], S10)
    T12 = fd.ops.pad(T8, [0, 64, 0, 0, 0, 0, 0, 0], S10)
    T13 = fd.ops.add(T11, T12)
    T14 = fd.ops.broadcast_in_dim(T1, shape=[2, 32, 2048, 128], broadcast_dims=[2, 3])
    T15 = fd.ops.cast(T14, dtype=DataType.Float)
    T16 = fd.ops.mul(T3, T15)
    T17 = fd.ops.add(T16, T13)
    T18 = fd.ops.cast(T17, dtype=DataType.BFloat16)
    fd.add_output(T18)


with FusionDefinition() as fd:
    nvfuser_fusion_id38(fd)

inputs = [
    torch.testing.make_tensor((2, 32, 2048, 128), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((2048, 128), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((2048, 128), dtype=torch.bfloat16, device='cuda:0'),
]
fd.execute(inputs)
