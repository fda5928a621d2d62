# expect: axis 1 is 16 in the list but the definition requires 8
# expect-line: 18
import torch
from nvfuser import FusionDefinition, DataType


def f(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[4, 8], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    T1 = fd.define_tensor(shape=[8], contiguity=[True], dtype=DataType.Float, is_cpu=False)
    T2 = fd.ops.exp(T0)
    fd.add_output(T2)


with FusionDefinition() as fd:
    f(fd)

inputs = [
    torch.randn((4, 16), dtype=torch.float32, device="cuda:0"),
    torch.randn((8,), dtype=torch.float32, device="cuda:0"),
]
