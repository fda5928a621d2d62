# fp8 training, delayed scaling (gradients in e5m2): the scale from the
# amax history is an input [1]; the gradient is scaled, clamped to +-57344
# and cast, and its amax taken for the next step's history.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id23(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T1 = fd.define_tensor(shape=[1], contiguity=[None], dtype=DataType.Float, is_cpu=False, stride_order=[0])
    T2 = fd.ops.cast(T0, dtype=DataType.Float)
    T3 = fd.ops.broadcast_in_dim(T1, shape=[8192, 8192], broadcast_dims=[1])
    T4 = fd.ops.mul(T2, T3)
    T5 = fd.ops.clamp(T4, -57344.0, 57344.0)
    T6 = fd.ops.cast(T5, dtype=DataType.Float8_e5m2)
    T7 = fd.ops.abs(T2)
    T8 = fd.ops.max(T7, dims=[0, 1], keepdim=False, dtype=DataType.Null)
    fd.add_output(T6)
    fd.add_output(T8)


with FusionDefinition() as fd:
    nvfuser_fusion_id23(fd)

inputs = [
    torch.testing.make_tensor((8192, 8192), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((1,), dtype=torch.float32, device='cuda:0', low=1, high=4),
]
fd.execute(inputs)
