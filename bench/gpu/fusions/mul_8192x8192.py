# A plain pointwise multiply of two [8192, 8192] bf16 tensors (issue 34:
# pointwise kernels at least as fast as torch.compile).
# Inputs: T0 x, T1 y [8192, 8192] bf16. Outputs: x * y [8192, 8192] bf16.
import torch
from nvfuser import FusionDefinition, DataType


def mul(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[8192, 8192], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    T1 = fd.define_tensor(shape=[8192, 8192], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    T2 = fd.ops.mul(T0, T1)
    fd.add_output(T2)


with FusionDefinition() as fd:
    mul(fd)

inputs = [
    torch.randn((8192, 8192), dtype=torch.bfloat16, device="cuda:0"),
    torch.randn((8192, 8192), dtype=torch.bfloat16, device="cuda:0"),
]
fd.execute(inputs)
