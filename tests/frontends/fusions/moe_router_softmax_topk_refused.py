# Mixture-of-experts router (Mixtral): softmax of the router logits over 8
# experts in float, then the top-2 experts with fd.ops.topk; topk is a
# sort, out of scope, refused naming it.
# expect: refused topk
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id30(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, 8], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T1 = fd.ops.cast(T0, dtype=DataType.Float)
    T2 = fd.ops.max(T1, dims=[1], keepdim=True, dtype=DataType.Null)
    T3 = fd.ops.broadcast_in_dim(T2, shape=T1.shape(), broadcast_dims=[0, 1])
    T4 = fd.ops.sub(T1, T3)
    T5 = fd.ops.exp(T4)
    T6 = fd.ops.sum(T5, dims=[1], keepdim=True, dtype=DataType.Null)
    T7 = fd.ops.broadcast_in_dim(T6, shape=T1.shape(), broadcast_dims=[0, 1])
    T8 = fd.ops.div(T5, T7)
    S9 = fd.define_scalar(2, dtype=DataType.Int)
    T10, T11 = fd.ops.topk(T8, S9, dim=1, largest=True, sorted=True)
    fd.add_output(T10)
    fd.add_output(T11)


with FusionDefinition() as fd:
    nvfuser_fusion_id30(fd)

inputs = [
    torch.testing.make_tensor((16384, 8), dtype=torch.bfloat16, device='cuda:0'),
]
fd.execute(inputs)
