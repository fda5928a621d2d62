# Pairwise differences of one vector, |x[:, None] - x[None, :]| (a pairwise
# distance matrix), as a front end prints it: the same input broadcast along
# the rows and along the columns in one expression. One kernel reads each
# value in one layout, so this is refused naming the broadcast until an
# input can be read along two axes.
# expect: pending broadcast_in_dim
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id25(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float, is_cpu=False, stride_order=[0])
    T1 = fd.ops.broadcast_in_dim(T0, shape=[T0.size(0), T0.size(0)], broadcast_dims=[0])
    T2 = fd.ops.broadcast_in_dim(T0, shape=[T0.size(0), T0.size(0)], broadcast_dims=[1])
    T3 = fd.ops.sub(T1, T2)
    T4 = fd.ops.abs(T3)
    fd.add_output(T4)


with FusionDefinition() as fd:
    nvfuser_fusion_id25(fd)

inputs = [
    torch.testing.make_tensor((2048,), dtype=torch.float32, device='cuda:0'),
]
fd.execute(inputs)
