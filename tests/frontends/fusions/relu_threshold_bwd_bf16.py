# ReLU backward as ATen's threshold_backward prints through Thunder:
# fd.ops.threshold on the saved activation turned into a 0/1 gate, times
# the incoming gradient, bf16, with the bias gradient of the layer below.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id44(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T2 = fd.ops.cast(T0, dtype=DataType.Float)
    T3 = fd.ops.cast(T1, dtype=DataType.Float)
    S4 = fd.define_scalar(0.00000, dtype=DataType.Double)
    T5 = fd.ops.threshold(T3, S4, S4)
    T6 = fd.ops.gt(T5, S4)
    T7 = fd.ops.where(T6, T2, S4)
    T8 = fd.ops.cast(T7, dtype=DataType.BFloat16)
    T9 = fd.ops.sum(T7, dims=[0], keepdim=False, dtype=DataType.Null)
    T10 = fd.ops.cast(T9, dtype=DataType.BFloat16)
    fd.add_output(T8)
    fd.add_output(T10)


with FusionDefinition() as fd:
    nvfuser_fusion_id44(fd)

inputs = [
    torch.testing.make_tensor((16384, 4096), dtype=torch.bfloat16, device='cuda:0', low=-1, high=1),
    torch.testing.make_tensor((16384, 4096), dtype=torch.bfloat16, device='cuda:0'),
]
fd.execute(inputs)
