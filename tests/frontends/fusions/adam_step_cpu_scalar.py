# Adam as PyTorch's foreach implementation writes it with capturable=False
# and Thunder prints it for nvFuser: the step counter is a 0-dim CPU tensor
# (is_cpu=True), passed to the kernel by value; the bias corrections
# 1 - beta1 ** step and 1 - beta2 ** step are computed from it inside the
# fusion; float32 parameters, gradients and moments.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id7(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    T2 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    T3 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    T4 = fd.define_tensor(shape=[], contiguity=[], dtype=DataType.Float, is_cpu=True, stride_order=[])
    S5 = fd.define_scalar(0.100000, dtype=DataType.Double)
    T6 = fd.ops.lerp(T2, T1, S5)
    S7 = fd.define_scalar(0.999000, dtype=DataType.Double)
    T8 = fd.ops.mul(T3, S7)
    S9 = fd.define_scalar(0.00100000, dtype=DataType.Double)
    T10 = fd.ops.addcmul(T8, T1, T1, S9)
    S11 = fd.define_scalar(0.900000, dtype=DataType.Double)
    T12 = fd.ops.pow(S11, T4)
    S13 = fd.define_scalar(1.00000, dtype=DataType.Double)
    T14 = fd.ops.sub(S13, T12)
    T15 = fd.ops.pow(S7, T4)
    T16 = fd.ops.sub(S13, T15)
    S17 = fd.define_scalar(0.00100000, dtype=DataType.Double)
    T18 = fd.ops.div(S17, T14)
    T19 = fd.ops.sqrt(T16)
    T20 = fd.ops.sqrt(T10)
    T21 = fd.ops.div(T20, T19)
    S22 = fd.define_scalar(1.00000e-08, dtype=DataType.Double)
    T23 = fd.ops.add(T21, S22)
    T24 = fd.ops.div(T6, T23)
    T25 = fd.ops.mul(T24, T18)
    T26 = fd.ops.sub(T0, T25)
    fd.add_output(T26)
    fd.add_output(T6)
    fd.add_output(T10)


with FusionDefinition() as fd:
    nvfuser_fusion_id7(fd)

inputs = [
    torch.randn((4096, 4096), dtype=torch.float32, device='cuda:0'),
    torch.randn((4096, 4096), dtype=torch.float32, device='cuda:0'),
    torch.randn((4096, 4096), dtype=torch.float32, device='cuda:0'),
    torch.testing.make_tensor((4096, 4096), dtype=torch.float32, device='cuda:0', low=0, high=2),
    torch.tensor(3.0, dtype=torch.float32),
]
fd.execute(inputs)
