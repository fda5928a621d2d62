# Softmax with a -inf mask made by fd.ops.full (what front ends print for
# masking), the mask a bool input.
import torch
from nvfuser import FusionDefinition, DataType


def fusion(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Bool, is_cpu=False)
    T2 = fd.ops.cast(T0, dtype=DataType.Float)
    S3 = fd.define_scalar(float("-inf"), dtype=DataType.Double)
    T4 = fd.ops.full(shape=T0.shape(), fill_value=S3, dtype=DataType.Float)
    T5 = fd.ops.where(T1, T2, T4)
    T6 = fd.ops.max(T5, dims=[1], keepdim=False, dtype=DataType.Null)
    T7 = fd.ops.broadcast_in_dim(T6, shape=T0.shape(), broadcast_dims=[0])
    T8 = fd.ops.exp(fd.ops.sub(T5, T7))
    T9 = fd.ops.sum(T8, dims=[1], keepdim=False, dtype=DataType.Null)
    T10 = fd.ops.broadcast_in_dim(T9, shape=T0.shape(), broadcast_dims=[0])
    T11 = fd.ops.cast(fd.ops.div(T8, T10), dtype=DataType.BFloat16)
    fd.add_output(T11)


with FusionDefinition() as fd:
    fusion(fd)

inputs = [
    torch.randn((2048, 4096), dtype=torch.bfloat16, device="cuda:0"),
    torch.randint(0, 2, (2048, 4096), dtype=torch.bool, device="cuda:0"),
]
fd.execute(inputs)
