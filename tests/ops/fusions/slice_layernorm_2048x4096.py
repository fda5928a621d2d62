# Layer norm (no affine) of the first half of each row, a slice read at
# shifted indices by a persistent kernel's two stages and its output pass.
# Inputs: T0 x [2048, 4096] bf16.
# Outputs: layernorm(x[:, :2048]) [2048, 2048] bf16.
import torch
from nvfuser import FusionDefinition, DataType


def fusion(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[2048, 4096], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    T1 = fd.ops.cast(fd.ops.slice(T0, [0, 0], [2048, 2048]), DataType.Float)
    T2, T3 = fd.ops.var_mean(T1, dims=[1], correction=0, keepdim=False)
    T4 = fd.ops.broadcast_in_dim(T3, shape=[2048, 2048], broadcast_dims=[0])
    T5 = fd.ops.broadcast_in_dim(fd.ops.rsqrt(fd.ops.add(T2, 1e-5)), shape=[2048, 2048], broadcast_dims=[0])
    fd.add_output(fd.ops.cast(fd.ops.mul(fd.ops.sub(T1, T4), T5), DataType.BFloat16))


with FusionDefinition() as fd:
    fusion(fd)

inputs = [
    torch.randn((2048, 4096), dtype=torch.bfloat16, device="cuda:0"),
]
fd.execute(inputs)
