# Mish (YOLOv4, some ViTs) forward and backward: softplus with PyTorch's
# threshold (x > 20 keeps x, else log1p(exp(x))), y = x * tanh(softplus),
# dx = dy * (t + x * sigmoid(x) * (1 - t^2)); float32, fd.ops.where with a
# comparison against a Double scalar.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id13(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    S2 = fd.define_scalar(20.0000, dtype=DataType.Double)
    T3 = fd.ops.gt(T0, S2)
    T4 = fd.ops.exp(T0)
    T5 = fd.ops.log1p(T4)
    T6 = fd.ops.where(T3, T0, T5)
    T7 = fd.ops.tanh(T6)
    T8 = fd.ops.mul(T0, T7)
    T9 = fd.ops.sigmoid(T0)
    T10 = fd.ops.mul(T7, T7)
    S11 = fd.define_scalar(1.00000, dtype=DataType.Double)
    T12 = fd.ops.sub(S11, T10)
    T13 = fd.ops.mul(T0, T9)
    T14 = fd.ops.mul(T13, T12)
    T15 = fd.ops.add(T7, T14)
    T16 = fd.ops.mul(T1, T15)
    fd.add_output(T8)
    fd.add_output(T16)


with FusionDefinition() as fd:
    nvfuser_fusion_id13(fd)

inputs = [
    torch.testing.make_tensor((16384, 4096), dtype=torch.float32, device='cuda:0', low=-30, high=30),
    torch.randn((16384, 4096), dtype=torch.float32, device='cuda:0'),
]
fd.execute(inputs)
