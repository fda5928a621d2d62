# Batch statistics of an NCHW activation: var_mean over dims [0, 2, 3]
# (unbiased variance for the running estimate), bf16 in, float out.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id25(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1, -1, -1], contiguity=[True, True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[3, 2, 1, 0])
    T1 = fd.ops.cast(T0, dtype=DataType.Float)
    T2, T3 = fd.ops.var_mean(T1, dims=[0, 2, 3], correction=1, keepdim=False)
    fd.add_output(T2)
    fd.add_output(T3)


with FusionDefinition() as fd:
    nvfuser_fusion_id25(fd)

inputs = [
    torch.testing.make_tensor((32, 128, 56, 56), dtype=torch.bfloat16, device='cuda:0'),
]
fd.execute(inputs)
