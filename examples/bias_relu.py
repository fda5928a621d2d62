# Bias add then ReLU with symbolic shapes: the simplest pointwise fusion with
# an inner-axis broadcast. Computes in float and rounds the result to fp16.
# Inputs: T0 x [M, N] fp16, T1 bias [N] fp16. Outputs: y [M, N] fp16.
import torch
from nvfuser import FusionDefinition, DataType


def bias_relu(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Half, is_cpu=False)
    T1 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Half, is_cpu=False)
    T2 = fd.ops.cast(T0, dtype=DataType.Float)
    T3 = fd.ops.cast(T1, dtype=DataType.Float)
    T4 = fd.ops.broadcast_in_dim(T3, shape=T0.shape(), broadcast_dims=[1])
    T5 = fd.ops.add(T2, T4)
    T6 = fd.ops.relu(T5)
    T7 = fd.ops.cast(T6, dtype=DataType.Half)
    fd.add_output(T7)


with FusionDefinition() as fd:
    bias_relu(fd)

inputs = [
    torch.randn((128, 256), dtype=torch.float16, device="cuda:0"),
    torch.randn((256,), dtype=torch.float16, device="cuda:0"),
]
fd.execute(inputs)
