# Found by scripts/fuzz.sh, minimized: var_mean whose variance
# nobody uses. Code generation failed with an internal error ("reduction 0
# used before it is computed"): the kernel plan took a reduction as needed
# only when its first output was.
import torch
from nvfuser import FusionDefinition, DataType


def var_mean_mean_only(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[32, 64], contiguity=[True, True], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    T1, T2 = fd.ops.var_mean(T0, dims=[1], correction=0, keepdim=True)
    T3 = fd.ops.broadcast_in_dim(T2, shape=[32, 64], broadcast_dims=[0, 1])
    T4 = fd.ops.mul(T3, T0)
    fd.add_output(T4)


inputs = [
    torch.randn((32, 64), dtype=torch.float32, device='cuda:0'),
]
