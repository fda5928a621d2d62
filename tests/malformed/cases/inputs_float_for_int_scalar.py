# expect: is a scalar of type int64 but the list gives a float64 number
# expect-line: 21
import torch
from nvfuser import FusionDefinition, DataType


def f(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    T1 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float, is_cpu=False)
    S2 = fd.define_scalar(dtype=DataType.Int)
    T2 = fd.ops.mul(T0, S2)
    fd.add_output(T2)


with FusionDefinition() as fd:
    f(fd)

inputs = [
    torch.randn((16, 32), dtype=torch.float32, device="cuda:0"),
    torch.randn((32,), dtype=torch.float32, device="cuda:0"),
    2.5,
]
