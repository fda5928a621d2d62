# A fused AdamW step over one flattened parameter group: fp32 master
# weights, bf16 gradient, fp32 moments; the hyperparameters and the bias
# corrections as scalar inputs; outputs the new master weights, moments
# and the bf16 copy of the weights the model uses.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id20(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float, is_cpu=False, stride_order=[0])
    T1 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[0])
    T2 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float, is_cpu=False, stride_order=[0])
    T3 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float, is_cpu=False, stride_order=[0])
    S4 = fd.define_scalar(None, dtype=DataType.Double)
    S5 = fd.define_scalar(None, dtype=DataType.Double)
    S6 = fd.define_scalar(None, dtype=DataType.Double)
    S7 = fd.define_scalar(None, dtype=DataType.Double)
    S8 = fd.define_scalar(None, dtype=DataType.Double)
    S9 = fd.define_scalar(None, dtype=DataType.Double)
    S10 = fd.define_scalar(None, dtype=DataType.Double)
    T11 = fd.ops.cast(T1, dtype=DataType.Float)
    S12 = fd.ops.mul(S4, S8)
    S13 = fd.ops.sub(1.0, S12)
    T14 = fd.ops.mul(T0, S13)
    T15 = fd.ops.mul(T2, S5)
    S16 = fd.ops.sub(1.0, S5)
    T17 = fd.ops.mul(T11, S16)
    T18 = fd.ops.add(T15, T17)
    T19 = fd.ops.mul(T3, S6)
    S20 = fd.ops.sub(1.0, S6)
    T21 = fd.ops.mul(T11, T11)
    T22 = fd.ops.mul(T21, S20)
    T23 = fd.ops.add(T19, T22)
    T24 = fd.ops.div(T18, S9)
    T25 = fd.ops.div(T23, S10)
    T26 = fd.ops.sqrt(T25)
    T27 = fd.ops.add(T26, S7)
    T28 = fd.ops.div(T24, T27)
    T29 = fd.ops.mul(T28, S4)
    T30 = fd.ops.sub(T14, T29)
    T31 = fd.ops.cast(T30, dtype=DataType.BFloat16)
    fd.add_output(T30)
    fd.add_output(T18)
    fd.add_output(T23)
    fd.add_output(T31)


with FusionDefinition() as fd:
    nvfuser_fusion_id20(fd)

inputs = [
    torch.testing.make_tensor((16777216,), dtype=torch.float32, device='cuda:0'),
    torch.testing.make_tensor((16777216,), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((16777216,), dtype=torch.float32, device='cuda:0'),
    torch.testing.make_tensor((16777216,), dtype=torch.float32, device='cuda:0', low=0, high=2),
    0.001,
    0.9,
    0.999,
    1e-08,
    0.01,
    0.271,
    0.0199,
]
fd.execute(inputs)
