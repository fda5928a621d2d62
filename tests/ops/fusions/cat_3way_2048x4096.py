# cat of three tensors along the last axis (packed q, k, v projections
# joined back, as attention backwards print it) followed by pointwise ops,
# and a cat along the first axis of two row blocks.
# Inputs: T0 [2048, 2048], T1 [2048, 1024], T2 [2048, 1024] bf16, T3 [1024, 4096] float.
# Outputs: y [2048, 4096] bf16 = relu(cat([T0, T1, T2], 1)) * 1.5, z [3072, 4096] float.
import torch
from nvfuser import FusionDefinition, DataType


def fusion(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[2048, 2048], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T1 = fd.define_tensor(shape=[2048, 1024], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T2 = fd.define_tensor(shape=[2048, 1024], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T3 = fd.define_tensor(shape=[1024, 4096], contiguity=[True, True], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    T4 = fd.ops.cat([T0, T1, T2], dim=1, manual_padding=0)
    T5 = fd.ops.cast(T4, dtype=DataType.Float)
    T6 = fd.ops.mul(fd.ops.relu(T5), 1.5)
    fd.add_output(fd.ops.cast(T6, dtype=DataType.BFloat16))
    T7 = fd.ops.cat([T5, T3], dim=0, manual_padding=0)
    fd.add_output(fd.ops.sigmoid(T7))


with FusionDefinition() as fd:
    fusion(fd)

inputs = [
    torch.randn((2048, 2048), dtype=torch.bfloat16, device="cuda:0"),
    torch.randn((2048, 1024), dtype=torch.bfloat16, device="cuda:0"),
    torch.randn((2048, 1024), dtype=torch.bfloat16, device="cuda:0"),
    torch.randn((1024, 4096), dtype=torch.float32, device="cuda:0"),
]
fd.execute(inputs)
