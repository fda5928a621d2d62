# expect: rank 9 exceeds the limit of 8
# expect-line: 8
import torch
from nvfuser import FusionDefinition, DataType


def f(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[2, 2, 2, 2, 2, 2, 2, 2, 2], dtype=DataType.Float)
    T2 = fd.ops.exp(T0)
    fd.add_output(T2)


with FusionDefinition() as fd:
    f(fd)
