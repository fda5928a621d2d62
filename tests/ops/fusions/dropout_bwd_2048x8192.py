# Dropout backward with the mask recomputed from the forward's seed and
# offset (no saved mask), and the bias gradient of the layer before it:
# dx = g * mask / (1 - p), db = sum of dx over the rows.
# Inputs: T0 g [M, N] bf16, S1 seed, S2 offset.
# Outputs: dx [M, N] bf16, db [N] float.
import torch
from nvfuser import FusionDefinition, DataType


def fusion(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    S1 = fd.define_scalar(None, dtype=DataType.Int)
    S2 = fd.define_scalar(None, dtype=DataType.Int)
    S3 = fd.define_scalar(0.00000, dtype=DataType.Double)
    S4 = fd.define_scalar(1.00000, dtype=DataType.Double)
    T5 = fd.ops.uniform(S3, S4, shape=T0.shape(), rng_seed=S1, rng_offset=S2, dtype=DataType.Float)
    S6 = fd.define_scalar(0.900000, dtype=DataType.Double)
    T7 = fd.ops.lt(T5, S6)
    T8 = fd.ops.cast(T0, dtype=DataType.Float)
    T9 = fd.ops.mul(T8, fd.ops.cast(T7, dtype=DataType.Float))
    S10 = fd.define_scalar(1.11111, dtype=DataType.Double)
    T11 = fd.ops.mul(T9, S10)
    T12 = fd.ops.sum(T11, dims=[0], keepdim=False, dtype=DataType.Null)
    fd.add_output(fd.ops.cast(T11, dtype=DataType.BFloat16))
    fd.add_output(T12)


with FusionDefinition() as fd:
    fusion(fd)

inputs = [
    torch.randn((2048, 8192), dtype=torch.bfloat16, device="cuda:0"),
    20261205,
    4,
]
fd.execute(inputs)
