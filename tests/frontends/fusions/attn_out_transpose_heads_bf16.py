# Attention output back to the residual stream's layout: [B, H, S, D] from
# the attention kernel permuted to [B, S, H, D] (y.transpose(1, 2)) and
# cast to bf16, as Thunder prints it when the transpose lands in a fusion
# (the merge of the heads is a view in the next one). A pure layout change:
# one pointwise kernel reading rows in order and writing them permuted.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id35(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[2, 32, 2048, 128], contiguity=[True, True, True, True], dtype=DataType.Float, is_cpu=False, stride_order=[3, 2, 1, 0])
    T1 = fd.ops.permute(T0, dims=[0, 2, 1, 3])
    T2 = fd.ops.cast(T1, dtype=DataType.BFloat16)
    fd.add_output(T2)


with FusionDefinition() as fd:
    nvfuser_fusion_id35(fd)

inputs = [
    torch.randn((2, 32, 2048, 128), dtype=torch.float32, device='cuda:0'),
]
fd.execute(inputs)
