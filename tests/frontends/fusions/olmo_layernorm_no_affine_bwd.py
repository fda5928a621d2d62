# OLMo's non-parametric LayerNorm (elementwise_affine=False: no weight, no
# bias) backward as Thunder's autodiff prints it: the saved mean and rstd
# [B, T, 1] in float32, dx = rstd * (dy - mean(dy) - xhat * mean(dy * xhat))
# over the hidden axis, bf16 [B, T, D] in and out; the hidden size comes as
# a runtime scalar (define_scalar(None)) as Thunder passes it for
# dynamic shapes.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id110(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[2, 1, 0])
    T1 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[2, 1, 0])
    T2 = fd.define_tensor(shape=[-1, -1, 1], contiguity=[True, True, None], dtype=DataType.Float, is_cpu=False, stride_order=[2, 1, 0])
    T3 = fd.define_tensor(shape=[-1, -1, 1], contiguity=[True, True, None], dtype=DataType.Float, is_cpu=False, stride_order=[2, 1, 0])
    S4 = fd.define_scalar(None, dtype=DataType.Double)
    T5 = fd.ops.cast(T0, dtype=DataType.Float)
    T6 = fd.ops.cast(T1, dtype=DataType.Float)
    T7 = fd.ops.broadcast_in_dim(T2, shape=T1.shape(), broadcast_dims=[0, 1, 2])
    T8 = fd.ops.broadcast_in_dim(T3, shape=T1.shape(), broadcast_dims=[0, 1, 2])
    T9 = fd.ops.sub(T6, T7)
    T10 = fd.ops.mul(T9, T8)
    T11 = fd.ops.sum(T5, dims=[2], keepdim=False, dtype=DataType.Null)
    T12 = fd.ops.broadcast_in_dim(T11, shape=[T1.size(0), T1.size(1), 1], broadcast_dims=[0, 1])
    T13 = fd.ops.div(T12, S4)
    T14 = fd.ops.mul(T5, T10)
    T15 = fd.ops.sum(T14, dims=[2], keepdim=False, dtype=DataType.Null)
    T16 = fd.ops.broadcast_in_dim(T15, shape=[T1.size(0), T1.size(1), 1], broadcast_dims=[0, 1])
    T17 = fd.ops.div(T16, S4)
    T18 = fd.ops.broadcast_in_dim(T13, shape=T1.shape(), broadcast_dims=[0, 1, 2])
    T19 = fd.ops.broadcast_in_dim(T17, shape=T1.shape(), broadcast_dims=[0, 1, 2])
    T20 = fd.ops.sub(T5, T18)
    T21 = fd.ops.mul(T10, T19)
    T22 = fd.ops.sub(T20, T21)
    T23 = fd.ops.mul(T8, T22)
    T24 = fd.ops.cast(T23, dtype=DataType.BFloat16)
    fd.add_output(T24)


with FusionDefinition() as fd:
    nvfuser_fusion_id110(fd)

inputs = [
    torch.testing.make_tensor((4, 2048, 4096), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((4, 2048, 4096), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((4, 2048, 1), dtype=torch.float32, device='cuda:0'),
    torch.testing.make_tensor((4, 2048, 1), dtype=torch.float32, device='cuda:0', low=0.5, high=2),
    4096.0,
]
fd.execute(inputs)
