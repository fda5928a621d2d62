# Backward of SiLU / Swish (EfficientNet, YOLO, Mamba's gate) as aten's
# silu_backward decomposes: s = sigmoid(x), dx = dy * s * (1 + x * (1 - s)),
# fp16 in and out, 4-D NCHW activations.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id12(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1, -1, -1], contiguity=[True, True, True, True], dtype=DataType.Half, is_cpu=False, stride_order=[3, 2, 1, 0])
    T1 = fd.define_tensor(shape=[-1, -1, -1, -1], contiguity=[True, True, True, True], dtype=DataType.Half, is_cpu=False, stride_order=[3, 2, 1, 0])
    T2 = fd.ops.cast(T0, dtype=DataType.Float)
    T3 = fd.ops.cast(T1, dtype=DataType.Float)
    T4 = fd.ops.neg(T3)
    T5 = fd.ops.exp(T4)
    S6 = fd.define_scalar(1.00000, dtype=DataType.Double)
    T7 = fd.ops.add(S6, T5)
    T8 = fd.ops.reciprocal(T7)
    T9 = fd.ops.sub(S6, T8)
    T10 = fd.ops.mul(T3, T9)
    T11 = fd.ops.add(S6, T10)
    T12 = fd.ops.mul(T8, T11)
    T13 = fd.ops.mul(T2, T12)
    T14 = fd.ops.cast(T13, dtype=DataType.Half)
    fd.add_output(T14)


with FusionDefinition() as fd:
    nvfuser_fusion_id12(fd)

inputs = [
    torch.randn((32, 144, 56, 56), dtype=torch.float16, device='cuda:0'),
    torch.randn((32, 144, 56, 56), dtype=torch.float16, device='cuda:0'),
]
fd.execute(inputs)
