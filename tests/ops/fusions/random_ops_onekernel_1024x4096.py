# random_ops_1024x4096's first four outputs in one kernel (that fusion is two
# segments): the same values, bit for bit, under another segmentation.
# Inputs: T0 [M, N] bf16, T1 [M, N] half (for their shapes and dtypes),
# S2 seed, S3 offset.
import torch
from nvfuser import FusionDefinition, DataType


def fusion(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Half, is_cpu=False)
    S2 = fd.define_scalar(None, dtype=DataType.Int)
    S3 = fd.define_scalar(None, dtype=DataType.Int)
    T4 = fd.ops.uniform(-1.0, 3.0, shape=T0.shape(), rng_seed=S2, rng_offset=S3, dtype=DataType.Float)
    T5 = fd.ops.normal(0.5, 2.0, shape=T0.shape(), rng_seed=S2, rng_offset=S3, dtype=DataType.Float)
    T6 = fd.ops.rand_like(T0, rng_seed=S2, rng_offset=S3)
    T7 = fd.ops.randn_like(T1, rng_seed=S2, rng_offset=fd.ops.add(S3, 4))
    fd.add_output(T4)
    fd.add_output(T5)
    fd.add_output(T6)
    fd.add_output(T7)


with FusionDefinition() as fd:
    fusion(fd)

inputs = [
    torch.randn((1024, 4096), dtype=torch.bfloat16, device="cuda:0"),
    torch.randn((1024, 4096), dtype=torch.float16, device="cuda:0"),
    123456789,
    8,
]
fd.execute(inputs)
