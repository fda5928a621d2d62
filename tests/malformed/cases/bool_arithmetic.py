# expect: operand is bool
# expect-line: 9
import torch
from nvfuser import FusionDefinition, DataType


def f(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Bool)
    T2 = fd.ops.neg(T0)
    fd.add_output(T2)


with FusionDefinition() as fd:
    f(fd)
