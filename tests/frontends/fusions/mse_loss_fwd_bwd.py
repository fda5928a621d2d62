# MSE loss and its gradient in one fusion (a regression head): the mean of
# (pred - target)^2 as a rank-0 output and 2 (pred - target) / N scaled by
# the incoming gradient, bf16 prediction, float target.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id19(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    S2 = fd.define_scalar(None, dtype=DataType.Double)
    T3 = fd.ops.cast(T0, dtype=DataType.Float)
    T4 = fd.ops.sub(T3, T1)
    T5 = fd.ops.mul(T4, T4)
    T6 = fd.ops.sum(T5, dims=[0, 1], keepdim=False, dtype=DataType.Null)
    S7 = fd.ops.size(T0, dim=0)
    S8 = fd.ops.size(T0, dim=1)
    S9 = fd.ops.mul(S7, S8)
    S10 = fd.ops.cast(S9, dtype=DataType.Double)
    T11 = fd.ops.div(T6, S10)
    S12 = fd.ops.mul(S2, 2.0)
    S13 = fd.ops.div(S12, S10)
    T14 = fd.ops.mul(T4, S13)
    T15 = fd.ops.cast(T14, dtype=DataType.BFloat16)
    fd.add_output(T11)
    fd.add_output(T15)


with FusionDefinition() as fd:
    nvfuser_fusion_id19(fd)

inputs = [
    torch.testing.make_tensor((16384, 1024), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((16384, 1024), dtype=torch.float32, device='cuda:0'),
    1.0,
]
fd.execute(inputs)
