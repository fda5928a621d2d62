# The classifier head's global average pool of a channels_last float16
# feature map (ResNet-50 / EfficientNet under torch.compile with
# channels_last), as Thunder prints x.mean((2, 3)): the input [N, C, H, W]
# with stride_order [3, 0, 2, 1] (C fastest), a float32 sum over H and W
# (the outer axes in memory) divided by H * W, rounded to fp16 [N, C].
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id95(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1, -1, -1], contiguity=[True, True, True, True], dtype=DataType.Half, is_cpu=False, stride_order=[3, 0, 2, 1])
    T1 = fd.ops.cast(T0, dtype=DataType.Float)
    T2 = fd.ops.sum(T1, dims=[2, 3], keepdim=False, dtype=DataType.Null)
    S3 = fd.define_scalar(49.0000, dtype=DataType.Double)
    T4 = fd.ops.div(T2, S3)
    T5 = fd.ops.cast(T4, dtype=DataType.Half)
    fd.add_output(T5)


with FusionDefinition() as fd:
    nvfuser_fusion_id95(fd)

inputs = [
    torch.randn(25690112, dtype=torch.float16, device='cuda:0').as_strided((256, 2048, 7, 7), (100352, 1, 14336, 2048)),
]
fd.execute(inputs)
