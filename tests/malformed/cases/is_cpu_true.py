# expect: input 0 is a CPU tensor (is_cpu=True) of rank 1; only 0-dim CPU tensors (scalars) are supported
# expect-line: 8
import torch
from nvfuser import FusionDefinition, DataType


def f(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float, is_cpu=True)
    T2 = fd.ops.exp(T0)
    fd.add_output(T2)


with FusionDefinition() as fd:
    f(fd)
