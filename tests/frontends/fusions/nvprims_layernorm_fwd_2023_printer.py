# LayerNorm forward as nvFuser's printer wrote it before its 2023 renames
# (PyTorch's nvprims executor, early Thunder): define_tensor(symbolic_sizes=,
# contiguous=), define_constant, reductions with axes=, broadcast_in_dim
# with output_shape=, copies through fd.ops.set.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id48(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(symbolic_sizes=[-1, -1], contiguous=[True, True], dtype=DataType.Half, is_cpu=False)
    T1 = fd.define_tensor(symbolic_sizes=[-1], contiguous=[True], dtype=DataType.Half, is_cpu=False)
    T2 = fd.define_tensor(symbolic_sizes=[-1], contiguous=[True], dtype=DataType.Half, is_cpu=False)
    T3 = fd.ops.set(T0)
    T4 = fd.ops.cast(T3, dtype=DataType.Float)
    T5, T6 = fd.ops.var_mean(T4, axes=[1], correction=0, keepdim=False)
    T7 = fd.ops.broadcast_in_dim(T5, output_shape=[8192, 1], broadcast_dims=[0])
    T8 = fd.ops.broadcast_in_dim(T6, output_shape=[8192, 1], broadcast_dims=[0])
    S9 = fd.define_constant(1.00000e-05)
    T10 = fd.ops.add(T7, S9)
    T11 = fd.ops.rsqrt(T10)
    T12 = fd.ops.broadcast_in_dim(T8, output_shape=[8192, 2048], broadcast_dims=[0, 1])
    T13 = fd.ops.sub(T4, T12)
    T14 = fd.ops.broadcast_in_dim(T11, output_shape=[8192, 2048], broadcast_dims=[0, 1])
    T15 = fd.ops.mul(T13, T14)
    T16 = fd.ops.cast(T1, dtype=DataType.Float)
    T17 = fd.ops.broadcast_in_dim(T16, output_shape=[8192, 2048], broadcast_dims=[1])
    T18 = fd.ops.mul(T15, T17)
    T19 = fd.ops.cast(T2, dtype=DataType.Float)
    T20 = fd.ops.broadcast_in_dim(T19, output_shape=[8192, 2048], broadcast_dims=[1])
    T21 = fd.ops.add(T18, T20)
    T22 = fd.ops.cast(T21, dtype=DataType.Half)
    T23 = fd.ops.sum(T4, axes=[1], keepdim=False, dtype=DataType.Null)
    fd.add_output(T22)
    fd.add_output(T8)
    fd.add_output(T11)
    fd.add_output(T23)


with FusionDefinition() as fd:
    nvfuser_fusion_id48(fd)

inputs = [
    torch.randn((8192, 2048), dtype=torch.float16, device='cuda:0'),
    torch.randn((2048,), dtype=torch.float16, device='cuda:0'),
    torch.randn((2048,), dtype=torch.float16, device='cuda:0'),
]
fd.execute(inputs)
