# Adam as PyTorch's fused/foreach implementation writes it and Thunder
# prints it for nvFuser: exp_avg.lerp_(grad, 1 - beta1) (fd.ops.lerp),
# exp_avg_sq.mul_(beta2).addcmul_(grad, grad, 1 - beta2) (fd.ops.addcmul),
# the parameter copied out through fd.ops.set; bf16 parameters and
# gradients, float32 moments.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id43(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T2 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    T3 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    S4 = fd.define_scalar(None, dtype=DataType.Double)
    S5 = fd.define_scalar(None, dtype=DataType.Double)
    T6 = fd.ops.cast(T1, dtype=DataType.Float)
    S7 = fd.define_scalar(0.100000, dtype=DataType.Double)
    T8 = fd.ops.lerp(T2, T6, S7)
    S9 = fd.define_scalar(0.999000, dtype=DataType.Double)
    T10 = fd.ops.mul(T3, S9)
    S11 = fd.define_scalar(0.00100000, dtype=DataType.Double)
    T12 = fd.ops.addcmul(T10, T6, T6, S11)
    T13 = fd.ops.div(T12, S5)
    T14 = fd.ops.sqrt(T13)
    S15 = fd.define_scalar(1.00000e-08, dtype=DataType.Double)
    T16 = fd.ops.add(T14, S15)
    T17 = fd.ops.div(T8, T16)
    T18 = fd.ops.cast(T0, dtype=DataType.Float)
    T19 = fd.ops.mul(T17, S4)
    T20 = fd.ops.sub(T18, T19)
    T21 = fd.ops.cast(T20, dtype=DataType.BFloat16)
    T22 = fd.ops.set(T8)
    fd.add_output(T21)
    fd.add_output(T22)
    fd.add_output(T12)


with FusionDefinition() as fd:
    nvfuser_fusion_id43(fd)

inputs = [
    torch.testing.make_tensor((8192, 4096), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((8192, 4096), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((8192, 4096), dtype=torch.float32, device='cuda:0'),
    torch.testing.make_tensor((8192, 4096), dtype=torch.float32, device='cuda:0', low=0, high=2),
    0.0001,
    0.0952,
]
fd.execute(inputs)
