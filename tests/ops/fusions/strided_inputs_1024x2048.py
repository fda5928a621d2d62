# Inputs as nvFuser's repro printer writes non-contiguous ones: a transposed
# layout (stride_order) given as .as_strided of a flat tensor. Static sizes:
# the harness's other-shape runs would not resize the flat tensor.
import torch
from nvfuser import FusionDefinition, DataType


def fusion(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[1024, 2048], contiguity=[True, True], dtype=DataType.Float, is_cpu=False, stride_order=[0, 1])
    T1 = fd.define_tensor(shape=[1024, 2048], contiguity=[True, True], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    T2 = fd.ops.add(fd.ops.mul(T0, T1), 1.0)
    T3 = fd.ops.sum(T2, dims=[1], keepdim=False, dtype=DataType.Null)
    fd.add_output(T2)
    fd.add_output(T3)


with FusionDefinition() as fd:
    fusion(fd)

inputs = [
    torch.randn(2097152, dtype=torch.float32, device="cuda:0").as_strided((1024, 2048), (1, 1024)),
    torch.testing.make_tensor((1024, 2048), dtype=torch.float32, device="cuda:0"),
]
fd.execute(inputs)
