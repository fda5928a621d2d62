# Bitwise and, or, xor, not and shifts over int32 tensors.
import torch
from nvfuser import FusionDefinition, DataType


def fusion(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Int32, is_cpu=False)
    T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Int32, is_cpu=False)
    T2 = fd.ops.bitwise_xor(fd.ops.bitwise_and(T0, T1), fd.ops.bitwise_or(T0, fd.ops.bitwise_not(T1)))
    T3 = fd.ops.bitwise_left_shift(T0, fd.ops.bitwise_and(T1, 7))
    T4 = fd.ops.bitwise_right_shift(T2, 3)
    T5 = fd.ops.add(T3, T4)
    fd.add_output(T5)


with FusionDefinition() as fd:
    fusion(fd)

inputs = [
    torch.randint(-1000, 1000, (4096, 4096), dtype=torch.int32, device="cuda:0"),
    torch.randint(0, 1048576, (4096, 4096), dtype=torch.int32, device="cuda:0"),
]
fd.execute(inputs)
