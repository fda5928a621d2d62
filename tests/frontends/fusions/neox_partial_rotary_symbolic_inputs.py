# GPT-NeoX / Pythia partial rotary embedding (rotary_pct = 0.25: the first
# 32 of 128 head dims rotate, the rest pass through) as Thunder prints it
# by default: define_tensor with symbolic sizes (-1) but the trace's
# concrete sizes in slice indices, cat and broadcast_in_dim shapes, so the
# moved axes take the inputs list's sizes. fp16, q and k in one fusion.
# expect: compiles
# small: 2048->64
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id38(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1, -1, -1], contiguity=[True, True, True, True], dtype=DataType.Half, is_cpu=False, stride_order=[3, 2, 1, 0])
    T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Half, is_cpu=False, stride_order=[1, 0])
    T2 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Half, is_cpu=False, stride_order=[1, 0])
    T3 = fd.ops.slice(T0, start_indices=[0, 0, 0, 0], end_indices=[4, 32, 2048, 32], strides=[1, 1, 1, 1], manual_normalization=0)
    T4 = fd.ops.slice(T0, start_indices=[0, 0, 0, 32], end_indices=[4, 32, 2048, 128], strides=[1, 1, 1, 1], manual_normalization=0)
    T5 = fd.ops.slice(T3, start_indices=[0, 0, 0, 0], end_indices=[4, 32, 2048, 16], strides=[1, 1, 1, 1], manual_normalization=0)
    T6 = fd.ops.slice(T3, start_indices=[0, 0, 0, 16], end_indices=[4, 32, 2048, 32], strides=[1, 1, 1, 1], manual_normalization=0)
    T7 = fd.ops.cast(T6, dtype=DataType.Float)
    T8 = fd.ops.neg(T7)
    T9 = fd.ops.cast(T8, dtype=DataType.Half)
    T10 = fd.ops.cat([T9, T5], dim=-1, manual_padding=0)
    T11 = fd.ops.broadcast_in_dim(T1, shape=[4, 32, 2048, 32], broadcast_dims=[2, 3])
    T12 = fd.ops.broadcast_in_dim(T2, shape=[4, 32, 2048, 32], broadcast_dims=[2, 3])
    T13 = fd.ops.cast(T3, dtype=DataType.Float)
    T14 = fd.ops.cast(T11, dtype=DataType.Float)
    T15 = fd.ops.mul(T13, T14)
    T16 = fd.ops.cast(T10, dtype=DataType.Float)
    T17 = fd.ops.cast(T12, dtype=DataType.Float)
    T18 = fd.ops.mul(T16, T17)
    T19 = fd.ops.add(T15, T18)
    T20 = fd.ops.cast(T19, dtype=DataType.Half)
    T21 = fd.ops.cat([T20, T4], dim=-1, manual_padding=0)
    fd.add_output(T21)


with FusionDefinition() as fd:
    nvfuser_fusion_id38(fd)

inputs = [
    torch.testing.make_tensor((4, 32, 2048, 128), dtype=torch.float16, device='cuda:0'),
    torch.testing.make_tensor((2048, 32), dtype=torch.float16, device='cuda:0'),
    torch.testing.make_tensor((2048, 32), dtype=torch.float16, device='cuda:0'),
]
fd.execute(inputs)
