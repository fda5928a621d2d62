# expect: size -5 of axis 0 is negative
# expect-line: 8
import torch
from nvfuser import FusionDefinition, DataType


def f(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[-5, 4], contiguity=[True, True], dtype=DataType.Float)
    T2 = fd.ops.exp(T0)
    fd.add_output(T2)


with FusionDefinition() as fd:
    f(fd)
