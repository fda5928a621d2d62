# Softmax over dim 1 of a [batch, slots, features] tensor (Slot Attention's
# competition over slots, MoE routing over experts laid out in the middle):
# the reduction axis is neither innermost nor outermost. Forward
# probabilities and, from the same fusion, the backward
# p * (g - sum(g * p, dim=1)); float32, keepdim reductions.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id18(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.Float, is_cpu=False, stride_order=[2, 1, 0])
    T1 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.Float, is_cpu=False, stride_order=[2, 1, 0])
    T2 = fd.ops.max(T0, dims=[1], keepdim=True, dtype=DataType.Null)
    V3 = T0.shape()
    T4 = fd.ops.broadcast_in_dim(T2, shape=V3, broadcast_dims=[0, 1, 2])
    T5 = fd.ops.sub(T0, T4)
    T6 = fd.ops.exp(T5)
    T7 = fd.ops.sum(T6, dims=[1], keepdim=True, dtype=DataType.Null)
    T8 = fd.ops.broadcast_in_dim(T7, shape=V3, broadcast_dims=[0, 1, 2])
    T9 = fd.ops.div(T6, T8)
    T10 = fd.ops.mul(T1, T9)
    T11 = fd.ops.sum(T10, dims=[1], keepdim=True, dtype=DataType.Null)
    T12 = fd.ops.broadcast_in_dim(T11, shape=V3, broadcast_dims=[0, 1, 2])
    T13 = fd.ops.sub(T1, T12)
    T14 = fd.ops.mul(T9, T13)
    fd.add_output(T9)
    fd.add_output(T14)


with FusionDefinition() as fd:
    nvfuser_fusion_id18(fd)

inputs = [
    torch.randn((64, 16, 4096), dtype=torch.float32, device='cuda:0'),
    torch.randn((64, 16, 4096), dtype=torch.float32, device='cuda:0'),
]
fd.execute(inputs)
