# expect: .as_strided reads element 512 of a tensor of 512 elements
# expect-line: 17
import torch
from nvfuser import FusionDefinition, DataType


def f(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    T2 = fd.ops.neg(T0)
    fd.add_output(T2)


with FusionDefinition() as fd:
    f(fd)

inputs = [
    torch.randn(512, dtype=torch.float32, device="cuda:0").as_strided((16, 33), (32, 1)),
]
fd.execute(inputs)
