# Inputs with known contents, so `fusionc eval` checksums are known exactly:
# ones * 3 + 1 = 4 everywhere (4x4: sum 64); softmax rows each sum to 1
# (8 rows: sum 8, within rounding); full 2.5 over 6 elements (sum 15); a
# scalar input 0.5 multiplies the fourth tensor of zeros + 2 (5 elements: 5).
import torch
from nvfuser import FusionDefinition, DataType


def generators(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[4, 4], contiguity=[True, True], dtype=DataType.Float)
    T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    T2 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Double)
    T3 = fd.define_tensor(shape=[5], contiguity=[True], dtype=DataType.Float)
    S4 = fd.define_scalar(dtype=DataType.Double)
    T5 = fd.ops.mul(T0, 1.0)
    T6 = fd.ops.sum(T1, dims=[1], keepdim=False, dtype=DataType.Double)
    T7 = fd.ops.neg(T2)
    T8 = fd.ops.mul(T3, S4)
    fd.add_output(T5)
    fd.add_output(T6)
    fd.add_output(T7)
    fd.add_output(T8)


with FusionDefinition() as fd:
    generators(fd)

inputs = [
    torch.ones((4, 4), dtype=torch.float32, device="cuda:0") * 3 + 1,
    torch.softmax(torch.randn((8, 16), device="cuda:0"), -1),
    torch.full((6,), 2.5, dtype=torch.float64, device="cuda:0"),
    torch.zeros((5,), dtype=torch.float32, device="cuda:0") + 2,
    0.5,
]
fd.execute(inputs)
