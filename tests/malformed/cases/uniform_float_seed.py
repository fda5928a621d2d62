# expect: uniform: rng_seed is float64; it takes an integer scalar (DataType.Int)
# expect-line: 10
import torch
from nvfuser import FusionDefinition, DataType


def f(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    S1 = fd.define_scalar(None, dtype=DataType.Double)
    T2 = fd.ops.uniform(0.0, 1.0, shape=T0.shape(), rng_seed=S1, rng_offset=S1, dtype=DataType.Float)
    fd.add_output(T2)


with FusionDefinition() as fd:
    f(fd)

inputs = [
    torch.randn((16, 32), dtype=torch.float32, device="cuda:0"),
    7.0,
]
fd.execute(inputs)
