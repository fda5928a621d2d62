# A pairwise ranking loss term, softplus(s_i) - s_j over all pairs of a
# vector of scores: one value broadcast along the rows, a value computed
# from the same input along the columns. The two reads are of different
# values (the computed one is written by a kernel of its own).
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id26(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float, is_cpu=False, stride_order=[0])
    T1 = fd.ops.exp(T0)
    T2 = fd.ops.log1p(T1)
    T3 = fd.ops.broadcast_in_dim(T2, shape=[T0.size(0), T0.size(0)], broadcast_dims=[0])
    T4 = fd.ops.broadcast_in_dim(T0, shape=[T0.size(0), T0.size(0)], broadcast_dims=[1])
    T5 = fd.ops.sub(T3, T4)
    fd.add_output(T5)


with FusionDefinition() as fd:
    nvfuser_fusion_id26(fd)

inputs = [
    torch.testing.make_tensor((1024,), dtype=torch.float32, device='cuda:0'),
]
fd.execute(inputs)
