# LayerNorm backward over the last axis of a [batch, seq, hidden] tensor,
# every input symbolic (the shapes of broadcast_in_dim from T.shape() and
# fd.define_vector, as nvFuser's own front end writes them), mean and rstd
# saved with keepdim; gradients of input, weight and bias.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id8(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[2, 1, 0])
    T1 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[2, 1, 0])
    T2 = fd.define_tensor(shape=[-1, -1, 1], contiguity=[True, True, None], dtype=DataType.Float, is_cpu=False, stride_order=[2, 1, 0])
    T3 = fd.define_tensor(shape=[-1, -1, 1], contiguity=[True, True, None], dtype=DataType.Float, is_cpu=False, stride_order=[2, 1, 0])
    T4 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[0])
    T5 = fd.ops.cast(T0, dtype=DataType.Float)
    T6 = fd.ops.cast(T1, dtype=DataType.Float)
    T7 = fd.ops.cast(T4, dtype=DataType.Float)
    V8 = fd.define_vector([T0.size(0), T0.size(1), T0.size(2)], dtype=DataType.Int)
    T9 = fd.ops.broadcast_in_dim(T2, shape=V8, broadcast_dims=[0, 1, 2])
    T10 = fd.ops.broadcast_in_dim(T3, shape=V8, broadcast_dims=[0, 1, 2])
    T11 = fd.ops.sub(T6, T9)
    T12 = fd.ops.mul(T11, T10)
    T13 = fd.ops.broadcast_in_dim(T7, shape=T0.shape(), broadcast_dims=[2])
    T14 = fd.ops.mul(T5, T13)
    S15 = fd.ops.size(T0, dim=2)
    S16 = fd.ops.cast(S15, dtype=DataType.Double)
    S17 = fd.ops.reciprocal(S16)
    T18 = fd.ops.mul(T14, T12)
    T19 = fd.ops.sum(T18, dims=[2], keepdim=True, dtype=DataType.Null)
    T20 = fd.ops.sum(T14, dims=[2], keepdim=True, dtype=DataType.Null)
    T21 = fd.ops.broadcast_in_dim(T19, shape=V8, broadcast_dims=[0, 1, 2])
    T22 = fd.ops.broadcast_in_dim(T20, shape=V8, broadcast_dims=[0, 1, 2])
    T23 = fd.ops.mul(T12, T21)
    T24 = fd.ops.add(T22, T23)
    T25 = fd.ops.mul(T24, S17)
    T26 = fd.ops.sub(T14, T25)
    T27 = fd.ops.mul(T26, T10)
    T28 = fd.ops.cast(T27, dtype=DataType.BFloat16)
    T29 = fd.ops.mul(T5, T12)
    T30 = fd.ops.sum(T29, dims=[0, 1], keepdim=False, dtype=DataType.Null)
    T31 = fd.ops.sum(T5, dims=[0, 1], keepdim=False, dtype=DataType.Null)
    T32 = fd.ops.cast(T30, dtype=DataType.BFloat16)
    T33 = fd.ops.cast(T31, dtype=DataType.BFloat16)
    fd.add_output(T28)
    fd.add_output(T32)
    fd.add_output(T33)


with FusionDefinition() as fd:
    nvfuser_fusion_id8(fd)

inputs = [
    torch.testing.make_tensor((8, 1024, 2048), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((8, 1024, 2048), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((8, 1024, 1), dtype=torch.float32, device='cuda:0'),
    torch.testing.make_tensor((8, 1024, 1), dtype=torch.float32, device='cuda:0', low=0.5, high=1.5),
    torch.testing.make_tensor((2048,), dtype=torch.bfloat16, device='cuda:0'),
]
fd.execute(inputs)
