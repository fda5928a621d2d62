# expect: integer overflow
# expect-line: 8
import torch
from nvfuser import FusionDefinition, DataType


def f(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[1 << 70], contiguity=[True], dtype=DataType.Float)
    T2 = fd.ops.exp(T0)
    fd.add_output(T2)


with FusionDefinition() as fd:
    f(fd)
