# The Annotated Transformer's (and many tutorial models') hand-written
# LayerNorm: a_2 * (x - mean) / (std + eps) + b_2 with x.std(-1) unbiased
# (correction 1) and eps added to the std, not the variance, as Thunder
# prints it with var_mean(correction=1) and sqrt. float32 [B, T, D].
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id66(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.Float, is_cpu=False, stride_order=[2, 1, 0])
    T1 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float, is_cpu=False, stride_order=[0])
    T2 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float, is_cpu=False, stride_order=[0])
    T3, T4 = fd.ops.var_mean(T0, dims=[2], correction=1, keepdim=False)
    T5 = fd.ops.broadcast_in_dim(T4, shape=[32, 512, 1], broadcast_dims=[0, 1])
    T6 = fd.ops.sqrt(T3)
    T7 = fd.ops.broadcast_in_dim(T6, shape=[32, 512, 1], broadcast_dims=[0, 1])
    T8 = fd.ops.broadcast_in_dim(T5, shape=[32, 512, 512], broadcast_dims=[0, 1, 2])
    T9 = fd.ops.sub(T0, T8)
    T10 = fd.ops.broadcast_in_dim(T1, shape=[32, 512, 512], broadcast_dims=[2])
    T11 = fd.ops.mul(T10, T9)
    S12 = fd.define_scalar(1.00000e-06, dtype=DataType.Double)
    T13 = fd.ops.add(T7, S12)
    T14 = fd.ops.broadcast_in_dim(T13, shape=[32, 512, 512], broadcast_dims=[0, 1, 2])
    T15 = fd.ops.div(T11, T14)
    T16 = fd.ops.broadcast_in_dim(T2, shape=[32, 512, 512], broadcast_dims=[2])
    T17 = fd.ops.add(T15, T16)
    fd.add_output(T17)


with FusionDefinition() as fd:
    nvfuser_fusion_id66(fd)

inputs = [
    torch.testing.make_tensor((32, 512, 512), dtype=torch.float32, device='cuda:0'),
    torch.testing.make_tensor((512,), dtype=torch.float32, device='cuda:0'),
    torch.testing.make_tensor((512,), dtype=torch.float32, device='cuda:0'),
]
fd.execute(inputs)
