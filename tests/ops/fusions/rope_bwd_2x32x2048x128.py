# Rotary embedding backward as Thunder differentiates apply_rope: the
# gradient times cos, plus the gradient times sin with its halves swapped
# back (the cat's backward slices, the slices' backward pads, one of them
# negated), one kernel: the slices read g * sin at shifted indices.
# Inputs: T0 grad [batch, heads, seq, head_dim] bf16, T1 cos and T2 sin [seq, head_dim] bf16.
# Outputs: the input's gradient [batch, heads, seq, head_dim] bf16.
import torch
from nvfuser import FusionDefinition, DataType


def fusion(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[2, 32, 2048, 128], contiguity=[True, True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[3, 2, 1, 0])
    T1 = fd.define_tensor(shape=[2048, 128], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T2 = fd.define_tensor(shape=[2048, 128], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T3 = fd.ops.cast(T0, dtype=DataType.Float)
    T4 = fd.ops.broadcast_in_dim(T1, shape=[2, 32, 2048, 128], broadcast_dims=[2, 3])
    T5 = fd.ops.cast(T4, dtype=DataType.Float)
    T6 = fd.ops.mul(T3, T5)
    T7 = fd.ops.broadcast_in_dim(T2, shape=[2, 32, 2048, 128], broadcast_dims=[2, 3])
    T8 = fd.ops.cast(T7, dtype=DataType.Float)
    T9 = fd.ops.mul(T3, T8)
    T10 = fd.ops.cast(T9, dtype=DataType.BFloat16)
    T11 = fd.ops.slice(T10, start_indices=[0, 0, 0, 0], end_indices=[2, 32, 2048, 64], strides=[1, 1, 1, 1], manual_normalization=0)
    T12 = fd.ops.slice(T10, start_indices=[0, 0, 0, 64], end_indices=[2, 32, 2048, 128], strides=[1, 1, 1, 1], manual_normalization=0)
    T13 = fd.ops.cast(T11, dtype=DataType.Float)
    T14 = fd.ops.neg(T13)
    T15 = fd.ops.cast(T14, dtype=DataType.BFloat16)
    S16 = fd.define_scalar(0.00000, dtype=DataType.Double)
    T17 = fd.ops.pad(T15, [64, 0, 0, 0, 0, 0, 0, 0], S16)
    T18 = fd.ops.pad(T12, [0, 64, 0, 0, 0, 0, 0, 0], S16)
    T19 = fd.ops.cast(T17, dtype=DataType.Float)
    T20 = fd.ops.cast(T18, dtype=DataType.Float)
    T21 = fd.ops.add(T19, T20)
    T22 = fd.ops.add(T6, T21)
    T23 = fd.ops.cast(T22, dtype=DataType.BFloat16)
    fd.add_output(T23)


with FusionDefinition() as fd:
    fusion(fd)

inputs = [
    torch.randn((2, 32, 2048, 128), dtype=torch.bfloat16, device="cuda:0"),
    torch.randn((2048, 128), dtype=torch.bfloat16, device="cuda:0"),
    torch.randn((2048, 128), dtype=torch.bfloat16, device="cuda:0"),
]
fd.execute(inputs)
