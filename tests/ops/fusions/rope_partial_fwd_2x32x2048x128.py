# Rotary embedding on a quarter of each head (GPT-NeoX / Pythia's
# rotary_percentage 0.25, as litgpt's rope_n_elem prints): the first 32 of
# 128 features rotated (their halves swapped and negated, times cos and sin),
# joined back with the other 96 by a cat. One kernel: the outer cat reads the
# whole rotary sub-graph (an inner cat, slices, broadcasts of cos and sin) at
# shifted indices.
# Inputs: T0 q [batch, heads, seq, head_dim] bf16, T1 cos and T2 sin [seq, 32] bf16.
# Outputs: q with its first 32 features rotated [batch, heads, seq, head_dim] bf16.
import torch
from nvfuser import FusionDefinition, DataType


def fusion(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[2, 32, 2048, 128], contiguity=[True, True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[3, 2, 1, 0])
    T1 = fd.define_tensor(shape=[2048, 32], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T2 = fd.define_tensor(shape=[2048, 32], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T3 = fd.ops.slice(T0, start_indices=[0, 0, 0, 0], end_indices=[2, 32, 2048, 32], strides=[1, 1, 1, 1], manual_normalization=0)
    T4 = fd.ops.slice(T0, start_indices=[0, 0, 0, 0], end_indices=[2, 32, 2048, 16], strides=[1, 1, 1, 1], manual_normalization=0)
    T5 = fd.ops.slice(T0, start_indices=[0, 0, 0, 16], end_indices=[2, 32, 2048, 32], strides=[1, 1, 1, 1], manual_normalization=0)
    T6 = fd.ops.cast(T5, dtype=DataType.Float)
    T7 = fd.ops.neg(T6)
    T8 = fd.ops.cast(T7, dtype=DataType.BFloat16)
    T9 = fd.ops.cat([T8, T4], dim=-1, manual_padding=0)
    T10 = fd.ops.broadcast_in_dim(T1, shape=[2, 32, 2048, 32], broadcast_dims=[2, 3])
    T11 = fd.ops.broadcast_in_dim(T2, shape=[2, 32, 2048, 32], broadcast_dims=[2, 3])
    T12 = fd.ops.mul(fd.ops.cast(T3, dtype=DataType.Float), fd.ops.cast(T10, dtype=DataType.Float))
    T13 = fd.ops.mul(fd.ops.cast(T9, dtype=DataType.Float), fd.ops.cast(T11, dtype=DataType.Float))
    T14 = fd.ops.add(T12, T13)
    T15 = fd.ops.cast(T14, dtype=DataType.BFloat16)
    T16 = fd.ops.slice(T0, start_indices=[0, 0, 0, 32], end_indices=[2, 32, 2048, 128], strides=[1, 1, 1, 1], manual_normalization=0)
    T17 = fd.ops.cat([T15, T16], dim=-1, manual_padding=0)
    fd.add_output(T17)


with FusionDefinition() as fd:
    fusion(fd)

inputs = [
    torch.randn((2, 32, 2048, 128), dtype=torch.bfloat16, device="cuda:0"),
    torch.randn((2048, 32), dtype=torch.bfloat16, device="cuda:0"),
    torch.randn((2048, 32), dtype=torch.bfloat16, device="cuda:0"),
]
fd.execute(inputs)
