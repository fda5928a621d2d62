# expect: S1 is computed from the symbolic size T0.size(1), whose value is not known here
# expect-line: 10
import torch
from nvfuser import FusionDefinition, DataType


def f(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    S1 = fd.ops.mul(T0.size(1), 2)
    T2 = fd.ops.reshape(T0, new_shape=[S1, T0.size(0)])
    fd.add_output(T2)


with FusionDefinition() as fd:
    f(fd)
