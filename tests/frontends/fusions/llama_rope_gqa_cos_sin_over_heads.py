# Llama 3 rotary embedding with grouped-query attention, as Thunder prints
# HF's apply_rotary_pos_emb: cos and sin [B, T, D] (computed once per step)
# broadcast over 32 query heads and 8 key heads, rotate_half as two slices,
# a neg and a cat along the head size. q and k share the cos / sin inputs
# but have different head counts: two outputs of different shapes.
# small: 2048->16, 32->4, 8->2, 128->128, 64->64
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id31(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1, -1, -1], contiguity=[True, True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[3, 2, 1, 0])
    T1 = fd.define_tensor(shape=[-1, -1, -1, -1], contiguity=[True, True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[3, 2, 1, 0])
    T2 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[2, 1, 0])
    T3 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[2, 1, 0])
    T4 = fd.ops.broadcast_in_dim(T2, shape=[2, 1, 2048, 128], broadcast_dims=[0, 2, 3])
    T5 = fd.ops.broadcast_in_dim(T3, shape=[2, 1, 2048, 128], broadcast_dims=[0, 2, 3])
    T6 = fd.ops.cast(T0, dtype=DataType.Float)
    T7 = fd.ops.broadcast_in_dim(T4, shape=[2, 32, 2048, 128], broadcast_dims=[0, 1, 2, 3])
    T8 = fd.ops.cast(T7, dtype=DataType.Float)
    T9 = fd.ops.mul(T6, T8)
    T10 = fd.ops.slice(T0, start_indices=[0, 0, 0, 0], end_indices=[2, 32, 2048, 64], strides=[1, 1, 1, 1], manual_normalization=0)
    T11 = fd.ops.slice(T0, start_indices=[0, 0, 0, 64], end_indices=[2, 32, 2048, 128], strides=[1, 1, 1, 1], manual_normalization=0)
    T12 = fd.ops.cast(T11, dtype=DataType.Float)
    T13 = fd.ops.neg(T12)
    T14 = fd.ops.cast(T13, dtype=DataType.BFloat16)
    T15 = fd.ops.cat([T14, T10], dim=-1, manual_padding=0)
    T16 = fd.ops.cast(T15, dtype=DataType.Float)
    T17 = fd.ops.broadcast_in_dim(T5, shape=[2, 32, 2048, 128], broadcast_dims=[0, 1, 2, 3])
    T18 = fd.ops.cast(T17, dtype=DataType.Float)
    T19 = fd.ops.mul(T16, T18)
    T20 = fd.ops.add(T9, T19)
    T21 = fd.ops.cast(T20, dtype=DataType.BFloat16)
    T22 = fd.ops.cast(T1, dtype=DataType.Float)
    T23 = fd.ops.broadcast_in_dim(T4, shape=[2, 8, 2048, 128], broadcast_dims=[0, 1, 2, 3])
    T24 = fd.ops.cast(T23, dtype=DataType.Float)
    T25 = fd.ops.mul(T22, T24)
    T26 = fd.ops.slice(T1, start_indices=[0, 0, 0, 0], end_indices=[2, 8, 2048, 64], strides=[1, 1, 1, 1], manual_normalization=0)
    T27 = fd.ops.slice(T1, start_indices=[0, 0, 0, 64], end_indices=[2, 8, 2048, 128], strides=[1, 1, 1, 1], manual_normalization=0)
    T28 = fd.ops.cast(T27, dtype=DataType.Float)
    T29 = fd.ops.neg(T28)
    T30 = fd.ops.cast(T29, dtype=DataType.BFloat16)
    T31 = fd.ops.cat([T30, T26], dim=-1, manual_padding=0)
    T32 = fd.ops.cast(T31, dtype=DataType.Float)
    T33 = fd.ops.broadcast_in_dim(T5, shape=[2, 8, 2048, 128], broadcast_dims=[0, 1, 2, 3])
    T34 = fd.ops.cast(T33, dtype=DataType.Float)
    T35 = fd.ops.mul(T32, T34)
    T36 = fd.ops.add(T25, T35)
    T37 = fd.ops.cast(T36, dtype=DataType.BFloat16)
    fd.add_output(T21)
    fd.add_output(T37)


with FusionDefinition() as fd:
    nvfuser_fusion_id31(fd)

inputs = [
    torch.testing.make_tensor((2, 32, 2048, 128), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((2, 8, 2048, 128), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((2, 2048, 128), dtype=torch.bfloat16, device='cuda:0', low=-1, high=1),
    torch.testing.make_tensor((2, 2048, 128), dtype=torch.bfloat16, device='cuda:0', low=-1, high=1),
]
fd.execute(inputs)
