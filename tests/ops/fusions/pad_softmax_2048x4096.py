# Softmax over rows padded with 64 zeros (a padded vocabulary), in one
# persistent kernel whose stages read x at shifted indices again each.
# Inputs: T0 x [2048, 4096] bf16.
# Outputs: softmax(pad(x, [0, 64]), dim=1) [2048, 4160] bf16.
import torch
from nvfuser import FusionDefinition, DataType


def fusion(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[2048, 4096], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    T1 = fd.ops.cast(fd.ops.pad(T0, [0, 64]), DataType.Float)
    T2 = fd.ops.max(T1, dims=[1], keepdim=True)
    T3 = fd.ops.exp(fd.ops.sub(T1, T2))
    T4 = fd.ops.sum(T3, dims=[1], keepdim=True)
    fd.add_output(fd.ops.cast(fd.ops.div(T3, T4), DataType.BFloat16))


with FusionDefinition() as fd:
    fusion(fd)

inputs = [
    torch.randn((2048, 4096), dtype=torch.bfloat16, device="cuda:0"),
]
fd.execute(inputs)
