# GPT-2 MLP: bias add then GELU, tanh approximation (x^3 as x * x * x, the
# constants sqrt(2/pi) and 0.044715), fp16.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id2(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.Half, is_cpu=False, stride_order=[2, 1, 0])
    T1 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Half, is_cpu=False, stride_order=[0])
    T2 = fd.ops.cast(T0, dtype=DataType.Float)
    T3 = fd.ops.cast(T1, dtype=DataType.Float)
    T4 = fd.ops.broadcast_in_dim(T3, shape=[8, 1024, 3072], broadcast_dims=[2])
    T5 = fd.ops.add(T2, T4)
    S6 = fd.define_scalar(0.500000, dtype=DataType.Double)
    T7 = fd.ops.mul(S6, T5)
    T8 = fd.ops.mul(T5, T5)
    T9 = fd.ops.mul(T8, T5)
    S10 = fd.define_scalar(0.0447150, dtype=DataType.Double)
    T11 = fd.ops.mul(S10, T9)
    T12 = fd.ops.add(T5, T11)
    S13 = fd.define_scalar(0.797885, dtype=DataType.Double)
    T14 = fd.ops.mul(S13, T12)
    T15 = fd.ops.tanh(T14)
    S16 = fd.define_scalar(1.00000, dtype=DataType.Double)
    T17 = fd.ops.add(S16, T15)
    T18 = fd.ops.mul(T7, T17)
    T19 = fd.ops.cast(T18, dtype=DataType.Half)
    T20 = fd.ops.cast(T5, dtype=DataType.Half)
    fd.add_output(T20)
    fd.add_output(T19)


with FusionDefinition() as fd:
    nvfuser_fusion_id2(fd)

inputs = [
    torch.testing.make_tensor((8, 1024, 3072), dtype=torch.float16, device='cuda:0', low=-4, high=4),
    torch.testing.make_tensor((3072,), dtype=torch.float16, device='cuda:0', low=-1, high=1),
]
fd.execute(inputs)
