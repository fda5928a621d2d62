# Fused attention as nvFuser's front end offers it (fd.ops.sdpfa_fwd):
# out of scope, refused naming it.
# expect: refused sdpfa_fwd
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id42(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1, -1, -1], contiguity=[True, True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[3, 2, 1, 0])
    T1 = fd.define_tensor(shape=[-1, -1, -1, -1], contiguity=[True, True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[3, 2, 1, 0])
    T2 = fd.define_tensor(shape=[-1, -1, -1, -1], contiguity=[True, True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[3, 2, 1, 0])
    S3 = fd.define_scalar(0.00000, dtype=DataType.Double)
    S4 = fd.define_scalar(True, dtype=DataType.Bool)
    T5, T6, T7, T8 = fd.ops.sdpfa_fwd(T0, T1, T2, dropout_p=S3, is_causal=S4, scale=None)
    fd.add_output(T5)
    fd.add_output(T6)


with FusionDefinition() as fd:
    nvfuser_fusion_id42(fd)

inputs = [
    torch.testing.make_tensor((2, 32, 2048, 128), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((2, 32, 2048, 128), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((2, 32, 2048, 128), dtype=torch.bfloat16, device='cuda:0'),
]
fd.execute(inputs)
