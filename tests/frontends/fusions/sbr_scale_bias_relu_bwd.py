# Backward of scale-bias-ReLU: the saved bool mask selects the incoming
# gradient (where(mask, grad, 0.0)), times the per-channel scale; bf16,
# symbolic shapes.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id3(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False)
    T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Bool, is_cpu=False)
    T2 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    T3 = fd.ops.cast(T0, dtype=DataType.Float)
    T4 = fd.ops.cast(T2, dtype=DataType.Float)
    V5 = T4.shape()
    T6 = fd.ops.broadcast_in_dim(T3, shape=V5, broadcast_dims=[1])
    S7 = fd.define_scalar(0.00000, dtype=DataType.Double)
    T8 = fd.ops.where(T1, T4, S7)
    T9 = fd.ops.mul(T8, T6)
    T10 = fd.ops.cast(T9, dtype=DataType.BFloat16)
    fd.add_output(T10)


with FusionDefinition() as fd:
    nvfuser_fusion_id3(fd)

inputs = [
    torch.testing.make_tensor((3072,), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((8192, 3072), dtype=torch.bool, device='cuda:0'),
    torch.testing.make_tensor((8192, 3072), dtype=torch.bfloat16, device='cuda:0'),
]
fd.execute(inputs)
