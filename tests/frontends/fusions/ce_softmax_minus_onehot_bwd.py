# Cross-entropy backward without the gather: (softmax(logits) - onehot) *
# grad_loss / N, the one-hot target given as a bf16 input, the loss
# gradient a scalar input; logits recomputed from the saved logsumexp.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id17(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T1 = fd.define_tensor(shape=[-1, 1], contiguity=[True, None], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    T2 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    S3 = fd.define_scalar(None, dtype=DataType.Double)
    T4 = fd.ops.cast(T0, dtype=DataType.Float)
    T5 = fd.ops.broadcast_in_dim(T1, shape=T0.shape(), broadcast_dims=[0, 1])
    T6 = fd.ops.sub(T4, T5)
    T7 = fd.ops.exp(T6)
    T8 = fd.ops.cast(T2, dtype=DataType.Float)
    T9 = fd.ops.sub(T7, T8)
    S10 = fd.ops.size(T0, dim=0)
    S11 = fd.ops.cast(S10, dtype=DataType.Double)
    S12 = fd.ops.div(S3, S11)
    T13 = fd.ops.mul(T9, S12)
    T14 = fd.ops.cast(T13, dtype=DataType.BFloat16)
    fd.add_output(T14)


with FusionDefinition() as fd:
    nvfuser_fusion_id17(fd)

inputs = [
    torch.testing.make_tensor((4096, 32000), dtype=torch.bfloat16, device='cuda:0', low=-2, high=2),
    torch.testing.make_tensor((4096, 1), dtype=torch.float32, device='cuda:0', low=11, high=12),
    torch.testing.make_tensor((4096, 32000), dtype=torch.bfloat16, device='cuda:0', low=0, high=1),
    1.0,
]
fd.execute(inputs)
