# Dropout then a softmax over dim 0 (an outer reduction: lanes kernels),
# with the mask as an output: the random values indexed by a kernel whose
# threads run along the columns.
# Inputs: T0 x [M, N] bf16, S1 seed, S2 offset.
# Outputs: softmax [M, N] bf16, mask [M, N] bool.
import torch
from nvfuser import FusionDefinition, DataType


def fusion(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    S1 = fd.define_scalar(None, dtype=DataType.Int)
    S2 = fd.define_scalar(None, dtype=DataType.Int)
    T3 = fd.ops.uniform(0.0, 1.0, shape=T0.shape(), rng_seed=S1, rng_offset=S2, dtype=DataType.Float)
    T4 = fd.ops.lt(T3, 0.8)
    T5 = fd.ops.mul(fd.ops.mul(fd.ops.cast(T0, dtype=DataType.Float), T4), 1.25)
    T6 = fd.ops.max(T5, dims=[0], keepdim=False, dtype=DataType.Null)
    T7 = fd.ops.broadcast_in_dim(T6, shape=T0.shape(), broadcast_dims=[1])
    T8 = fd.ops.exp(fd.ops.sub(T5, T7))
    T9 = fd.ops.sum(T8, dims=[0], keepdim=False, dtype=DataType.Null)
    T10 = fd.ops.broadcast_in_dim(T9, shape=T0.shape(), broadcast_dims=[1])
    fd.add_output(fd.ops.cast(fd.ops.div(T8, T10), dtype=DataType.BFloat16))
    fd.add_output(T4)


with FusionDefinition() as fd:
    fusion(fd)

inputs = [
    torch.randn((2048, 8192), dtype=torch.bfloat16, device="cuda:0"),
    31337,
    12,
]
fd.execute(inputs)
