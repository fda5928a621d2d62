# Dropout with both a row reduction (normalized back into the rows) and a
# column reduction (an inner-outer persistent kernel: the column sums leave
# through the column epilogue), plus a random value per row ([M, 1], row
# scope); the mask is an output.
# Inputs: T0 x [M, N] float, S1 seed, S2 offset.
# Outputs: x - rowmean [M, N] float, column sums [N] float, mask [M, N] bool.
import torch
from nvfuser import FusionDefinition, DataType


def fusion(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    S1 = fd.define_scalar(None, dtype=DataType.Int)
    S2 = fd.define_scalar(None, dtype=DataType.Int)
    T3 = fd.ops.uniform(0.0, 1.0, shape=T0.shape(), rng_seed=S1, rng_offset=S2, dtype=DataType.Float)
    T4 = fd.ops.lt(T3, 0.9)
    V5 = fd.define_vector([T0.size(0), 1], dtype=DataType.Int)
    T6 = fd.ops.normal(0.0, 1.0, shape=V5, rng_seed=S1, rng_offset=fd.ops.add(S2, 1), dtype=DataType.Float)
    T7 = fd.ops.add(fd.ops.mul(T0, T4), T6)
    T8 = fd.ops.sum(T7, dims=[1], keepdim=False, dtype=DataType.Null)
    T9 = fd.ops.sum(T7, dims=[0], keepdim=False, dtype=DataType.Null)
    T10 = fd.ops.broadcast_in_dim(T8, shape=T0.shape(), broadcast_dims=[0])
    fd.add_output(fd.ops.sub(T7, fd.ops.div(T10, 4096.0)))
    fd.add_output(T9)
    fd.add_output(T4)


with FusionDefinition() as fd:
    fusion(fd)

inputs = [
    torch.randn((2048, 4096), dtype=torch.float32, device="cuda:0"),
    5,
    0,
]
fd.execute(inputs)
