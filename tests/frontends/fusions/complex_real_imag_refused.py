# A complex-valued rotary embedding as front ends print it for complex
# tensors: fd.ops.real / imag of a complex input. Complex arithmetic is out of
# scope.
# expect: refused real
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id24(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    T1 = fd.ops.real(T0)
    T2 = fd.ops.imag(T0)
    T3 = fd.ops.add(T1, T2)
    fd.add_output(T3)


with FusionDefinition() as fd:
    nvfuser_fusion_id24(fd)

inputs = [
    torch.testing.make_tensor((64, 128), dtype=torch.float32, device='cuda:0'),
]
fd.execute(inputs)
