# Rotary embedding of q and k as Thunder prints a LLaMA-2 7B attention block
# (litgpt's packed qkv): the projection [batch, seq, 3 * heads * head_dim]
# reshaped to [batch, seq, heads, 3, head_dim], permuted to heads first, q, k
# and v sliced out and reshaped to [batch, heads, seq, head_dim]; q and k
# rotated (x * cos + cat([-x2, x1]) * sin) in one kernel whose shifted reads
# go through the slices, reshapes and permute down to the packed input; v
# written by a kernel of its own.
# Inputs: T0 qkv [1, 1024, 12288] bf16, T1 cos and T2 sin [1024, 128] bf16.
# Outputs: q and k rotated [1, 32, 1024, 128] bf16, v [1, 32, 1024, 128] bf16.
import torch
from nvfuser import FusionDefinition, DataType


def fusion(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[1, 1024, 12288], contiguity=[None, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[2, 1, 0])
    T1 = fd.define_tensor(shape=[1024, 128], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T2 = fd.define_tensor(shape=[1024, 128], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T3 = fd.ops.reshape(T0, new_shape=[1, 1024, 32, 3, 128])
    T4 = fd.ops.permute(T3, dims=[0, 2, 3, 1, 4])
    T5 = fd.ops.slice(T4, start_indices=[0, 0, 0, 0, 0], end_indices=[1, 32, 1, 1024, 128], strides=[1, 1, 1, 1, 1], manual_normalization=0)
    T6 = fd.ops.slice(T4, start_indices=[0, 0, 1, 0, 0], end_indices=[1, 32, 2, 1024, 128], strides=[1, 1, 1, 1, 1], manual_normalization=0)
    T7 = fd.ops.slice(T4, start_indices=[0, 0, 2, 0, 0], end_indices=[1, 32, 3, 1024, 128], strides=[1, 1, 1, 1, 1], manual_normalization=0)
    T8 = fd.ops.reshape(T5, new_shape=[1, 32, 1024, 128])
    T9 = fd.ops.reshape(T6, new_shape=[1, 32, 1024, 128])
    T10 = fd.ops.reshape(T7, new_shape=[1, 32, 1024, 128])
    T11 = fd.ops.broadcast_in_dim(T1, shape=[1, 32, 1024, 128], broadcast_dims=[2, 3])
    T12 = fd.ops.broadcast_in_dim(T2, shape=[1, 32, 1024, 128], broadcast_dims=[2, 3])
    T13 = fd.ops.cast(T11, dtype=DataType.Float)
    T14 = fd.ops.cast(T12, dtype=DataType.Float)
    A0 = fd.ops.slice(T8, start_indices=[0, 0, 0, 0], end_indices=[1, 32, 1024, 128], strides=[1, 1, 1, 1], manual_normalization=0)
    B0 = fd.ops.slice(A0, start_indices=[0, 0, 0, 0], end_indices=[1, 32, 1024, 64], strides=[1, 1, 1, 1], manual_normalization=0)
    C0 = fd.ops.slice(A0, start_indices=[0, 0, 0, 64], end_indices=[1, 32, 1024, 128], strides=[1, 1, 1, 1], manual_normalization=0)
    D0 = fd.ops.cast(fd.ops.neg(fd.ops.cast(C0, dtype=DataType.Float)), dtype=DataType.BFloat16)
    E0 = fd.ops.cat([D0, B0], dim=-1, manual_padding=0)
    F0 = fd.ops.add(fd.ops.mul(fd.ops.cast(A0, dtype=DataType.Float), T13), fd.ops.mul(fd.ops.cast(E0, dtype=DataType.Float), T14))
    fd.add_output(fd.ops.cast(F0, dtype=DataType.BFloat16))
    A1 = fd.ops.slice(T9, start_indices=[0, 0, 0, 0], end_indices=[1, 32, 1024, 128], strides=[1, 1, 1, 1], manual_normalization=0)
    B1 = fd.ops.slice(A1, start_indices=[0, 0, 0, 0], end_indices=[1, 32, 1024, 64], strides=[1, 1, 1, 1], manual_normalization=0)
    C1 = fd.ops.slice(A1, start_indices=[0, 0, 0, 64], end_indices=[1, 32, 1024, 128], strides=[1, 1, 1, 1], manual_normalization=0)
    D1 = fd.ops.cast(fd.ops.neg(fd.ops.cast(C1, dtype=DataType.Float)), dtype=DataType.BFloat16)
    E1 = fd.ops.cat([D1, B1], dim=-1, manual_padding=0)
    F1 = fd.ops.add(fd.ops.mul(fd.ops.cast(A1, dtype=DataType.Float), T13), fd.ops.mul(fd.ops.cast(E1, dtype=DataType.Float), T14))
    fd.add_output(fd.ops.cast(F1, dtype=DataType.BFloat16))
    fd.add_output(T10)


with FusionDefinition() as fd:
    fusion(fd)

inputs = [
    torch.randn((1, 1024, 12288), dtype=torch.bfloat16, device="cuda:0"),
    torch.randn((1024, 128), dtype=torch.bfloat16, device="cuda:0"),
    torch.randn((1024, 128), dtype=torch.bfloat16, device="cuda:0"),
]
fd.execute(inputs)
