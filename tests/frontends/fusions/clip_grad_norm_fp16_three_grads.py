# torch.nn.utils.clip_grad_norm_(max_norm=1.0) over three float16 gradients
# of different shapes as the foreach path lowers: each gradient's squared
# sum in float32, the total norm sqrt(a + b + c), clip_coef = max_norm /
# (total + 1e-6) clamped to at most 1, every gradient scaled by it and
# rounded back to fp16. Outputs the clipped grads and the total norm.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id83(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Half, is_cpu=False, stride_order=[1, 0])
    T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Half, is_cpu=False, stride_order=[1, 0])
    T2 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Half, is_cpu=False, stride_order=[0])
    T3 = fd.ops.cast(T0, dtype=DataType.Float)
    T4 = fd.ops.mul(T3, T3)
    T5 = fd.ops.sum(T4, dims=[0, 1], keepdim=False, dtype=DataType.Null)
    T6 = fd.ops.cast(T1, dtype=DataType.Float)
    T7 = fd.ops.mul(T6, T6)
    T8 = fd.ops.sum(T7, dims=[0, 1], keepdim=False, dtype=DataType.Null)
    T9 = fd.ops.cast(T2, dtype=DataType.Float)
    T10 = fd.ops.mul(T9, T9)
    T11 = fd.ops.sum(T10, dims=[0], keepdim=False, dtype=DataType.Null)
    T12 = fd.ops.add(T5, T8)
    T13 = fd.ops.add(T12, T11)
    T14 = fd.ops.sqrt(T13)
    S15 = fd.define_scalar(1.00000e-06, dtype=DataType.Double)
    T16 = fd.ops.add(T14, S15)
    S17 = fd.define_scalar(1.00000, dtype=DataType.Double)
    T18 = fd.ops.div(S17, T16)
    T19 = fd.ops.minimum(T18, S17)
    T20 = fd.ops.broadcast_in_dim(T19, shape=[4096, 1024], broadcast_dims=[])
    T21 = fd.ops.mul(T3, T20)
    T22 = fd.ops.cast(T21, dtype=DataType.Half)
    T23 = fd.ops.broadcast_in_dim(T19, shape=[1024, 4096], broadcast_dims=[])
    T24 = fd.ops.mul(T6, T23)
    T25 = fd.ops.cast(T24, dtype=DataType.Half)
    T26 = fd.ops.broadcast_in_dim(T19, shape=[1024], broadcast_dims=[])
    T27 = fd.ops.mul(T9, T26)
    T28 = fd.ops.cast(T27, dtype=DataType.Half)
    fd.add_output(T22)
    fd.add_output(T25)
    fd.add_output(T28)
    fd.add_output(T14)


with FusionDefinition() as fd:
    nvfuser_fusion_id83(fd)

inputs = [
    torch.testing.make_tensor((4096, 1024), dtype=torch.float16, device='cuda:0', low=-0.01, high=0.01),
    torch.testing.make_tensor((1024, 4096), dtype=torch.float16, device='cuda:0', low=-0.01, high=0.01),
    torch.testing.make_tensor((1024,), dtype=torch.float16, device='cuda:0', low=-0.01, high=0.01),
]
fd.execute(inputs)
