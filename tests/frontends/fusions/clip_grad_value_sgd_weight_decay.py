# clip_grad_value_(params, 1.0) then SGD with decoupled weight decay on a
# flattened fp32 parameter bucket with a bf16 gradient: g = clamp(g, -1, 1)
# (fd.ops.clamp with scalar bounds), p = p * (1 - lr * wd) - lr * g, the
# learning rate a Float scalar input, the bf16 model copy an output.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id10(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float, is_cpu=False, stride_order=[0])
    T1 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[0])
    S2 = fd.define_scalar(None, dtype=DataType.Float)
    T3 = fd.ops.cast(T1, dtype=DataType.Float)
    S4 = fd.define_scalar(-1.00000, dtype=DataType.Double)
    S5 = fd.define_scalar(1.00000, dtype=DataType.Double)
    T6 = fd.ops.clamp(T3, S4, S5)
    S7 = fd.define_scalar(0.0100000, dtype=DataType.Double)
    S8 = fd.ops.mul(S2, S7)
    S9 = fd.ops.sub(S5, S8)
    T10 = fd.ops.mul(T0, S9)
    T11 = fd.ops.mul(T6, S2)
    T12 = fd.ops.sub(T10, T11)
    T13 = fd.ops.cast(T12, dtype=DataType.BFloat16)
    fd.add_output(T12)
    fd.add_output(T13)


with FusionDefinition() as fd:
    nvfuser_fusion_id10(fd)

inputs = [
    torch.randn((25165824,), dtype=torch.float32, device='cuda:0'),
    torch.testing.make_tensor((25165824,), dtype=torch.bfloat16, device='cuda:0', low=-3, high=3),
    0.001,
]
fd.execute(inputs)
