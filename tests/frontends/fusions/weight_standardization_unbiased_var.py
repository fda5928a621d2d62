# Weight Standardization (BiT / NFNet convolutions): a conv weight
# [out, in, kh, kw] standardized per output channel over its other three
# axes with the unbiased variance (fd.ops.var, correction=1), then scaled
# by a gain [out, 1, 1, 1]; static shapes, float32.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id15(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[512, 256, 3, 3], contiguity=[True, True, True, True], dtype=DataType.Float, is_cpu=False, stride_order=[3, 2, 1, 0])
    T1 = fd.define_tensor(shape=[512, 1, 1, 1], contiguity=[True, None, None, None], dtype=DataType.Float, is_cpu=False, stride_order=[3, 2, 1, 0])
    T2 = fd.ops.var(T0, dims=[1, 2, 3], correction=1, keepdim=False)
    T3 = fd.ops.sum(T0, dims=[1, 2, 3], keepdim=False, dtype=DataType.Null)
    S4 = fd.define_scalar(2304.00, dtype=DataType.Double)
    T5 = fd.ops.div(T3, S4)
    T6 = fd.ops.broadcast_in_dim(T5, shape=[512, 256, 3, 3], broadcast_dims=[0])
    T7 = fd.ops.sub(T0, T6)
    S8 = fd.define_scalar(1.00000e-10, dtype=DataType.Double)
    T9 = fd.ops.add(T2, S8)
    T10 = fd.ops.rsqrt(T9)
    T11 = fd.ops.broadcast_in_dim(T10, shape=[512, 256, 3, 3], broadcast_dims=[0])
    T12 = fd.ops.mul(T7, T11)
    T13 = fd.ops.broadcast_in_dim(T1, shape=[512, 256, 3, 3], broadcast_dims=[0, 1, 2, 3])
    T14 = fd.ops.mul(T12, T13)
    fd.add_output(T14)


with FusionDefinition() as fd:
    nvfuser_fusion_id15(fd)

inputs = [
    torch.randn((512, 256, 3, 3), dtype=torch.float32, device='cuda:0'),
    torch.randn((512, 1, 1, 1), dtype=torch.float32, device='cuda:0'),
]
fd.execute(inputs)
