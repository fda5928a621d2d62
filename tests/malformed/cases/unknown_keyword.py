# expect: unexpected keyword argument 'dimz'
# expect-line: 10
import torch
from nvfuser import FusionDefinition, DataType


def f(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    T1 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float, is_cpu=False)
    T2 = fd.ops.sum(T0, dimz=[1], keepdim=False)
    fd.add_output(T2)


with FusionDefinition() as fd:
    f(fd)

inputs = [
    torch.randn((16, 32), dtype=torch.float32, device="cuda:0"),
    torch.randn((32,), dtype=torch.float32, device="cuda:0"),
]
fd.execute(inputs)
