# expect: the inputs list has 1 entry but the definition takes 2 inputs
# expect-line: 17
import torch
from nvfuser import FusionDefinition, DataType


def f(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    T1 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float, is_cpu=False)
    T2 = fd.ops.exp(T0)
    fd.add_output(T2)


with FusionDefinition() as fd:
    f(fd)

inputs = [
    torch.randn((16, 32), dtype=torch.float32, device="cuda:0"),
]
