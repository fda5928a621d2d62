# torch.var_mean(x, dim=-1, keepdim=True, unbiased) on float32 activations,
# both results outputs (nvFuser's var_mean op, correction 1).
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id24(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    T1, T2 = fd.ops.var_mean(T0, dims=[1], correction=1, keepdim=True)
    fd.add_output(T1)
    fd.add_output(T2)


with FusionDefinition() as fd:
    nvfuser_fusion_id24(fd)

inputs = [
    torch.testing.make_tensor((8192, 4096), dtype=torch.float32, device='cuda:0'),
]
fd.execute(inputs)
