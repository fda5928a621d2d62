# Backward of dropout + residual: the saved keep mask (bool) times the
# incoming gradient times 1/keep, added to the residual branch's gradient,
# and the bias gradient (sum over tokens) of the dropped branch.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id36(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Bool, is_cpu=False, stride_order=[1, 0])
    T2 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T3 = fd.ops.cast(T0, dtype=DataType.Float)
    T4 = fd.ops.where(T1, T3, 0.0)
    S5 = fd.define_scalar(1.11111, dtype=DataType.Double)
    T6 = fd.ops.mul(T4, S5)
    T7 = fd.ops.cast(T2, dtype=DataType.Float)
    T8 = fd.ops.add(T6, T7)
    T9 = fd.ops.cast(T8, dtype=DataType.BFloat16)
    T10 = fd.ops.sum(T6, dims=[0], keepdim=False, dtype=DataType.Null)
    T11 = fd.ops.cast(T10, dtype=DataType.BFloat16)
    fd.add_output(T9)
    fd.add_output(T11)


with FusionDefinition() as fd:
    nvfuser_fusion_id36(fd)

inputs = [
    torch.testing.make_tensor((8192, 4096), dtype=torch.bfloat16, device='cuda:0', low=-1, high=1),
    torch.testing.make_tensor((8192, 4096), dtype=torch.bool, device='cuda:0'),
    torch.testing.make_tensor((8192, 4096), dtype=torch.bfloat16, device='cuda:0', low=-1, high=1),
]
fd.execute(inputs)
