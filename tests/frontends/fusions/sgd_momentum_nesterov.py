# SGD with momentum, weight decay, dampening and Nesterov over a 2-D weight
# (a foreach step fused per tensor): float32 throughout, scalar inputs.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id21(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    T2 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    S3 = fd.define_scalar(None, dtype=DataType.Double)
    S4 = fd.define_scalar(None, dtype=DataType.Double)
    S5 = fd.define_scalar(None, dtype=DataType.Double)
    S6 = fd.define_scalar(None, dtype=DataType.Double)
    T7 = fd.ops.mul(T0, S5)
    T8 = fd.ops.add(T1, T7)
    T9 = fd.ops.mul(T2, S4)
    S10 = fd.ops.sub(1.0, S6)
    T11 = fd.ops.mul(T8, S10)
    T12 = fd.ops.add(T9, T11)
    T13 = fd.ops.mul(T12, S4)
    T14 = fd.ops.add(T8, T13)
    T15 = fd.ops.mul(T14, S3)
    T16 = fd.ops.sub(T0, T15)
    fd.add_output(T16)
    fd.add_output(T12)


with FusionDefinition() as fd:
    nvfuser_fusion_id21(fd)

inputs = [
    torch.testing.make_tensor((4096, 4096), dtype=torch.float32, device='cuda:0'),
    torch.testing.make_tensor((4096, 4096), dtype=torch.float32, device='cuda:0'),
    torch.testing.make_tensor((4096, 4096), dtype=torch.float32, device='cuda:0'),
    0.1,
    0.9,
    0.0001,
    0.0,
]
fd.execute(inputs)
