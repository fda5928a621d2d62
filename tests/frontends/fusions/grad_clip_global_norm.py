# torch.nn.utils.clip_grad_norm_ on one flattened fp32 gradient bucket:
# the 2-norm over the whole tensor, clip_coef = max_norm / (norm + 1e-6)
# clamped to 1, the gradient scaled in place of itself; the norm an output.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id49(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float, is_cpu=False, stride_order=[0])
    S1 = fd.define_scalar(None, dtype=DataType.Double)
    T2 = fd.ops.mul(T0, T0)
    T3 = fd.ops.sum(T2, dims=[0], keepdim=False, dtype=DataType.Null)
    T4 = fd.ops.sqrt(T3)
    S5 = fd.define_scalar(1.00000e-06, dtype=DataType.Double)
    T6 = fd.ops.add(T4, S5)
    T7 = fd.ops.div(S1, T6)
    S8 = fd.define_scalar(1.00000, dtype=DataType.Double)
    T9 = fd.ops.minimum(T7, S8)
    T10 = fd.ops.broadcast_in_dim(T9, shape=T0.shape(), broadcast_dims=[])
    T11 = fd.ops.mul(T0, T10)
    fd.add_output(T11)
    fd.add_output(T4)


with FusionDefinition() as fd:
    nvfuser_fusion_id49(fd)

inputs = [
    torch.testing.make_tensor((25165824,), dtype=torch.float32, device='cuda:0', low=-0.01, high=0.01),
    1.0,
]
fd.execute(inputs)
