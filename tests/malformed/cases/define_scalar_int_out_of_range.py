# expect: define_scalar value 1e+34 for int64: an integer constant must lie within the int64 range
# expect-line: 10
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id0(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[16, 32], contiguity=[True, True], dtype=DataType.Int, is_cpu=False,
                          stride_order=[1, 0])
    S1 = fd.define_scalar(1e34, dtype=DataType.Int)
    T2 = fd.ops.add(T0, S1)
    fd.add_output(T2)


with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

inputs = [
    torch.zeros((16, 32), dtype=torch.int64, device="cuda:0"),
]
fd.execute(inputs)
