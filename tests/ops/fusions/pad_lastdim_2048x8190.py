# Padding as front ends print it to align a row (a vocabulary of 8190 padded
# to 8192 with zeros), then pointwise ops on the padded tensor, and a pad of
# the rows' axis with a fill value from a scalar input.
# Inputs: T0 x [2048, 8190] bf16, S1 fill (float).
# Outputs: y [2048, 8192] bf16 (x * 2 + 1 in the window, 1 in the pad),
# z [2051, 8190] float (x with a row above and two below of fill, exp'd).
import torch
from nvfuser import FusionDefinition, DataType


def fusion(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[2048, 8190], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    S1 = fd.define_scalar(None, dtype=DataType.Double)
    S2 = fd.define_scalar(0.00000, dtype=DataType.Double)
    T3 = fd.ops.pad(T0, [0, 2], S2)
    T4 = fd.ops.cast(T3, dtype=DataType.Float)
    T5 = fd.ops.add(fd.ops.mul(T4, 2.0), 1.0)
    fd.add_output(fd.ops.cast(T5, dtype=DataType.BFloat16))
    T6 = fd.ops.cast(T0, dtype=DataType.Float)
    T7 = fd.ops.mul(T6, 0.5)
    T8 = fd.ops.pad(T7, [0, 0, 1, 2], S1)
    fd.add_output(fd.ops.exp(T8))


with FusionDefinition() as fd:
    fusion(fd)

inputs = [
    torch.randn((2048, 8190), dtype=torch.bfloat16, device="cuda:0"),
    -0.75,
]
fd.execute(inputs)
