# expect: bitwise_and: an operand is float32; bitwise ops take integers or bools
# expect-line: 10
import torch
from nvfuser import FusionDefinition, DataType


def f(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Int, is_cpu=False)
    T2 = fd.ops.bitwise_and(T0, T1)
    fd.add_output(T2)


with FusionDefinition() as fd:
    f(fd)

inputs = [
    torch.randn((16, 32), dtype=torch.float32, device="cuda:0"),
    torch.randint(0, 10, (16, 32), dtype=torch.int64, device="cuda:0"),
]
fd.execute(inputs)
