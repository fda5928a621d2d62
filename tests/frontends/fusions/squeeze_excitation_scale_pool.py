# Squeeze-and-Excitation (EfficientNet / MobileNetV3 / RegNet) after the
# excitation's two small matmuls: x * sigmoid(gate)[:, :, None, None]
# (broadcast_dims [0, 1] into NCHW), plus the next block's squeeze, the
# mean over H and W (a sum over the two INNER axes times 1/(H*W)), fp16.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id17(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1, -1, -1], contiguity=[True, True, True, True], dtype=DataType.Half, is_cpu=False, stride_order=[3, 2, 1, 0])
    T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Half, is_cpu=False, stride_order=[1, 0])
    T2 = fd.ops.cast(T0, dtype=DataType.Float)
    T3 = fd.ops.cast(T1, dtype=DataType.Float)
    T4 = fd.ops.sigmoid(T3)
    T5 = fd.ops.broadcast_in_dim(T4, shape=[64, 240, 28, 28], broadcast_dims=[0, 1])
    T6 = fd.ops.mul(T2, T5)
    T7 = fd.ops.sum(T6, dims=[2, 3], keepdim=False, dtype=DataType.Null)
    S8 = fd.define_scalar(0.00127551, dtype=DataType.Double)
    T9 = fd.ops.mul(T7, S8)
    T10 = fd.ops.cast(T6, dtype=DataType.Half)
    T11 = fd.ops.cast(T9, dtype=DataType.Half)
    fd.add_output(T10)
    fd.add_output(T11)


with FusionDefinition() as fd:
    nvfuser_fusion_id17(fd)

inputs = [
    torch.randn((64, 240, 28, 28), dtype=torch.float16, device='cuda:0'),
    torch.randn((64, 240), dtype=torch.float16, device='cuda:0'),
]
fd.execute(inputs)
