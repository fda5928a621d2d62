# Shift ops after a reduction: rows centred by their mean, then the halves
# swapped by cat. The cat's operands depend on a reduction result, which a
# kernel cannot read at shifted indices, so the segmenter puts the boundary
# before them (the mean comes from memory) and the rest stays one kernel.
# Inputs: T0 x [2048, 4096] float.
# Outputs: y [2048, 4096] float = cat([c[:, 2048:], c[:, :2048]], 1) * 2, c = x - mean(x, 1).
import torch
from nvfuser import FusionDefinition, DataType


def fusion(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[2048, 4096], contiguity=[True, True], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    T1 = fd.ops.sum(T0, dims=[1], keepdim=False, dtype=DataType.Null)
    T2 = fd.ops.mul(T1, 1.0 / 4096)
    T3 = fd.ops.broadcast_in_dim(T2, shape=[2048, 4096], broadcast_dims=[0])
    T4 = fd.ops.sub(T0, T3)
    T5 = fd.ops.slice(T4, start_indices=[0, 2048], end_indices=[2048, 4096], strides=[1, 1], manual_normalization=0)
    T6 = fd.ops.slice(T4, start_indices=[0, 0], end_indices=[2048, 2048], strides=[1, 1], manual_normalization=0)
    T7 = fd.ops.cat([T5, T6], dim=1, manual_padding=0)
    fd.add_output(fd.ops.mul(T7, 2.0))


with FusionDefinition() as fd:
    fusion(fd)

inputs = [
    torch.randn((2048, 4096), dtype=torch.float32, device="cuda:0"),
]
fd.execute(inputs)
