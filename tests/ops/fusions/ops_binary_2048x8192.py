# atan2, remainder and clamp over float tensors.
import torch
from nvfuser import FusionDefinition, DataType


def fusion(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    T2 = fd.ops.atan2(T0, T1)
    T3 = fd.ops.remainder(T0, 0.75)
    T4 = fd.ops.clamp(T1, -0.5, 0.5)
    T5 = fd.ops.add(fd.ops.add(T2, T3), T4)
    fd.add_output(T5)


with FusionDefinition() as fd:
    fusion(fd)

inputs = [
    torch.randn((2048, 8192), dtype=torch.float32, device="cuda:0"),
    torch.randn((2048, 8192), dtype=torch.float32, device="cuda:0"),
]
fd.execute(inputs)
