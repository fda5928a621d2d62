# expect: operand axis 0 has extent 8 but output axis 1 has extent 6
# expect-line: 10
import torch
from nvfuser import FusionDefinition, DataType


def f(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[4, 8], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    T1 = fd.define_tensor(shape=[8], contiguity=[True], dtype=DataType.Float, is_cpu=False)
    T2 = fd.ops.broadcast_in_dim(T1, shape=[4, 6], broadcast_dims=[1])
    fd.add_output(T2)


with FusionDefinition() as fd:
    f(fd)
