# LayerNorm forward with symbolic sizes everywhere (nvFuser's own front
# end: T.shape() for every broadcast, var_mean, the epsilon a scalar
# input), float32 weight and bias on bf16 activations.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id29(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T1 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float, is_cpu=False, stride_order=[0])
    T2 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float, is_cpu=False, stride_order=[0])
    S3 = fd.define_scalar(None, dtype=DataType.Double)
    T4 = fd.ops.cast(T0, dtype=DataType.Float)
    T5, T6 = fd.ops.var_mean(T4, dims=[1], correction=0, keepdim=False)
    V7 = fd.define_vector([T0.size(0), 1], dtype=DataType.Int)
    T8 = fd.ops.broadcast_in_dim(T5, shape=V7, broadcast_dims=[0])
    T9 = fd.ops.broadcast_in_dim(T6, shape=V7, broadcast_dims=[0])
    T10 = fd.ops.add(T8, S3)
    T11 = fd.ops.rsqrt(T10)
    T12 = fd.ops.broadcast_in_dim(T9, shape=T0.shape(), broadcast_dims=[0, 1])
    T13 = fd.ops.sub(T4, T12)
    T14 = fd.ops.broadcast_in_dim(T11, shape=T0.shape(), broadcast_dims=[0, 1])
    T15 = fd.ops.mul(T13, T14)
    T16 = fd.ops.broadcast_in_dim(T1, shape=T0.shape(), broadcast_dims=[1])
    T17 = fd.ops.mul(T15, T16)
    T18 = fd.ops.broadcast_in_dim(T2, shape=T0.shape(), broadcast_dims=[1])
    T19 = fd.ops.add(T17, T18)
    T20 = fd.ops.cast(T19, dtype=DataType.BFloat16)
    fd.add_output(T20)
    fd.add_output(T9)
    fd.add_output(T11)


with FusionDefinition() as fd:
    nvfuser_fusion_id29(fd)

inputs = [
    torch.testing.make_tensor((16384, 1536), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((1536,), dtype=torch.float32, device='cuda:0'),
    torch.testing.make_tensor((1536,), dtype=torch.float32, device='cuda:0'),
    1e-05,
]
fd.execute(inputs)
