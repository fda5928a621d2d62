# Cross-entropy backward as Thunder differentiates the gather: the one-hot
# of the targets built with fd.ops.scatter into zeros, subtracted from the
# softmax; scatter is out of scope, refused naming it.
# expect: refused scatter
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id28(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[4096, 32000], contiguity=[True, True], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    T1 = fd.define_tensor(shape=[4096, 1], contiguity=[True, None], dtype=DataType.Int, is_cpu=False, stride_order=[1, 0])
    S2 = fd.define_scalar(0.00000, dtype=DataType.Double)
    T3 = fd.ops.full(shape=[4096, 32000], fill_value=S2, dtype=DataType.Float)
    S4 = fd.define_scalar(1.00000, dtype=DataType.Double)
    T5 = fd.ops.full(shape=[4096, 1], fill_value=S4, dtype=DataType.Float)
    T6 = fd.ops.scatter(T3, T1, T5, dim=1)
    T7 = fd.ops.sub(T0, T6)
    fd.add_output(T7)


with FusionDefinition() as fd:
    nvfuser_fusion_id28(fd)

inputs = [
    torch.testing.make_tensor((4096, 32000), dtype=torch.float32, device='cuda:0'),
    torch.testing.make_tensor((4096, 1), dtype=torch.int64, device='cuda:0', low=0, high=32000),
]
fd.execute(inputs)
