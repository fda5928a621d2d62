# expect: which cannot broadcast
# expect-line: 10
import torch
from nvfuser import FusionDefinition, DataType


def f(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[4, 8], contiguity=[True, True], dtype=DataType.Float)
    T1 = fd.define_tensor(shape=[4, 6], contiguity=[True, True], dtype=DataType.Float)
    T2 = fd.ops.add(T0, T1)
    fd.add_output(T2)


with FusionDefinition() as fd:
    f(fd)
