# expect: a second function definition 'g'
# expect-line: 14
import torch
from nvfuser import FusionDefinition, DataType


def f(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    T1 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float, is_cpu=False)
    T2 = fd.ops.exp(T0)
    fd.add_output(T2)


def g(fd: FusionDefinition) -> None:
    T3 = fd.define_tensor(shape=[2], contiguity=[True], dtype=DataType.Float)
    fd.add_output(T3)


with FusionDefinition() as fd:
    f(fd)

inputs = [
    torch.randn((16, 32), dtype=torch.float32, device="cuda:0"),
    torch.randn((32,), dtype=torch.float32, device="cuda:0"),
]
fd.execute(inputs)
