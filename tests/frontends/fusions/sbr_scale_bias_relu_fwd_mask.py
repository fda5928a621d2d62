# Scale-bias-ReLU (the affine + activation after a BatchNorm in inference
# form, fused as nvFuser's benchmark writes it): x * scale + bias per
# channel in float, cast back to fp16 BEFORE the ReLU, which is
# where(gt(x, 0), x, 0.0) on the fp16 value; the bool mask is an output
# for the backward. Symbolic shapes through T.shape().
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id2(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Half, is_cpu=False)
    T1 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Half, is_cpu=False)
    T2 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Half, is_cpu=False)
    T3 = fd.ops.cast(T0, dtype=DataType.Float)
    T4 = fd.ops.cast(T1, dtype=DataType.Float)
    T5 = fd.ops.cast(T2, dtype=DataType.Float)
    V6 = T5.shape()
    T7 = fd.ops.broadcast_in_dim(T4, shape=V6, broadcast_dims=[1])
    T8 = fd.ops.mul(T5, T7)
    T9 = fd.ops.broadcast_in_dim(T3, shape=V6, broadcast_dims=[1])
    T10 = fd.ops.add(T8, T9)
    T11 = fd.ops.cast(T10, dtype=DataType.Half)
    S12 = fd.define_scalar(0.00000, dtype=DataType.Double)
    T13 = fd.ops.gt(T11, S12)
    T14 = fd.ops.where(T13, T11, S12)
    fd.add_output(T13)
    fd.add_output(T14)


with FusionDefinition() as fd:
    nvfuser_fusion_id2(fd)

inputs = [
    torch.testing.make_tensor((12288,), dtype=torch.float16, device='cuda:0'),
    torch.testing.make_tensor((12288,), dtype=torch.float16, device='cuda:0'),
    torch.testing.make_tensor((4096, 12288), dtype=torch.float16, device='cuda:0'),
]
fd.execute(inputs)
