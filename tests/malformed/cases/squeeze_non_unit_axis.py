# expect: has extent 8, not 1
# expect-line: 10
import torch
from nvfuser import FusionDefinition, DataType


def f(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[4, 8], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    T1 = fd.define_tensor(shape=[8], contiguity=[True], dtype=DataType.Float, is_cpu=False)
    T2 = fd.ops.squeeze(T0, dims=[1])
    fd.add_output(T2)


with FusionDefinition() as fd:
    f(fd)
