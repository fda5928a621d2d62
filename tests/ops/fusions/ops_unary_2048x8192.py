# sign, round, trunc, log2, log10, isnan, isinf, isfinite over a bf16 tensor.
import torch
from nvfuser import FusionDefinition, DataType


def fusion(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T1 = fd.ops.cast(T0, dtype=DataType.Float)
    S2 = fd.define_scalar(4.0, dtype=DataType.Double)
    T3 = fd.ops.mul(fd.ops.sign(T1), fd.ops.round(fd.ops.mul(T1, S2)))
    T4 = fd.ops.add(T3, fd.ops.trunc(fd.ops.mul(T1, S2)))
    T5 = fd.ops.add(fd.ops.abs(T1), 1.0)
    T6 = fd.ops.add(fd.ops.log2(T5), fd.ops.log10(T5))
    T7 = fd.ops.bitwise_or(fd.ops.isnan(T1), fd.ops.isinf(T1))
    T8 = fd.ops.where(fd.ops.isfinite(T1), fd.ops.add(T4, T6), 0.0)
    T9 = fd.ops.where(T7, float("nan"), T8)
    T10 = fd.ops.cast(T9, dtype=DataType.BFloat16)
    fd.add_output(T10)


with FusionDefinition() as fd:
    fusion(fd)

inputs = [
    torch.randn((2048, 8192), dtype=torch.bfloat16, device="cuda:0"),
]
fd.execute(inputs)
