# LAMB's per-layer step (apex FusedLAMB / NVLAMB's second stage) for one
# weight matrix: the Adam-style update u = m_hat / (sqrt(v_hat) + eps) + wd
# * w, the norms of w and u (two whole-tensor reductions), the trust ratio
# ||w|| / ||u|| where both are positive (else 1), and w - lr * ratio * u.
# The lr and bias corrections come as 0-dim CPU tensors. float32 [4096, 4096].
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id70(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    T2 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    T3 = fd.define_tensor(shape=[], contiguity=[], dtype=DataType.Float, is_cpu=True)
    T4 = fd.define_tensor(shape=[], contiguity=[], dtype=DataType.Float, is_cpu=True)
    T5 = fd.define_tensor(shape=[], contiguity=[], dtype=DataType.Float, is_cpu=True)
    T6 = fd.ops.div(T1, T4)
    T7 = fd.ops.div(T2, T5)
    T8 = fd.ops.sqrt(T7)
    S9 = fd.define_scalar(1.00000e-06, dtype=DataType.Double)
    T10 = fd.ops.add(T8, S9)
    T11 = fd.ops.div(T6, T10)
    S12 = fd.define_scalar(0.0100000, dtype=DataType.Double)
    T13 = fd.ops.mul(T0, S12)
    T14 = fd.ops.add(T11, T13)
    T15 = fd.ops.mul(T0, T0)
    T16 = fd.ops.sum(T15, dims=[0, 1], keepdim=False, dtype=DataType.Null)
    T17 = fd.ops.sqrt(T16)
    T18 = fd.ops.mul(T14, T14)
    T19 = fd.ops.sum(T18, dims=[0, 1], keepdim=False, dtype=DataType.Null)
    T20 = fd.ops.sqrt(T19)
    S21 = fd.define_scalar(0.00000, dtype=DataType.Double)
    T22 = fd.ops.gt(T17, S21)
    T23 = fd.ops.gt(T20, S21)
    T24 = fd.ops.logical_and(T22, T23)
    T25 = fd.ops.div(T17, T20)
    S26 = fd.define_scalar(1.00000, dtype=DataType.Double)
    T27 = fd.ops.where(T24, T25, S26)
    T28 = fd.ops.mul(T3, T27)
    T29 = fd.ops.broadcast_in_dim(T28, shape=[4096, 4096], broadcast_dims=[])
    T30 = fd.ops.mul(T29, T14)
    T31 = fd.ops.sub(T0, T30)
    fd.add_output(T31)


with FusionDefinition() as fd:
    nvfuser_fusion_id70(fd)

inputs = [
    torch.testing.make_tensor((4096, 4096), dtype=torch.float32, device='cuda:0'),
    torch.testing.make_tensor((4096, 4096), dtype=torch.float32, device='cuda:0'),
    torch.testing.make_tensor((4096, 4096), dtype=torch.float32, device='cuda:0', low=0, high=1),
    torch.tensor(0.001, dtype=torch.float32),
    torch.tensor(0.19, dtype=torch.float32),
    torch.tensor(0.0199, dtype=torch.float32),
]
fd.execute(inputs)
