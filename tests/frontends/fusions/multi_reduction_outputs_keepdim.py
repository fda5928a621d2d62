# Several reductions of one activation in one fusion: the bias gradient
# (sum over batch and sequence), per-token sums and maxima with keepdim,
# and the activation normalized by its token sum.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id34(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[2, 1, 0])
    T1 = fd.ops.cast(T0, dtype=DataType.Float)
    T2 = fd.ops.sum(T1, dims=[0, 1], keepdim=False, dtype=DataType.Null)
    T3 = fd.ops.abs(T1)
    T4 = fd.ops.sum(T3, dims=[2], keepdim=True, dtype=DataType.Null)
    T5 = fd.ops.max(T3, dims=[2], keepdim=True, dtype=DataType.Null)
    T6 = fd.ops.add(T4, 1.0)
    T7 = fd.ops.div(T1, T6)
    T8 = fd.ops.cast(T7, dtype=DataType.BFloat16)
    T9 = fd.ops.cast(T2, dtype=DataType.BFloat16)
    fd.add_output(T9)
    fd.add_output(T4)
    fd.add_output(T5)
    fd.add_output(T8)


with FusionDefinition() as fd:
    nvfuser_fusion_id34(fd)

inputs = [
    torch.testing.make_tensor((4, 2048, 2048), dtype=torch.bfloat16, device='cuda:0', low=-1, high=1),
]
fd.execute(inputs)
