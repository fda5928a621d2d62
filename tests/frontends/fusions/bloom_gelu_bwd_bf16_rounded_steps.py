# BLOOM's GeLU backward (HF bloom_gelu_back: the tanh form's derivative with
# 0.79788456 and 0.1070322243) on bfloat16 tensors as Thunder prints eager's
# op-by-op rounding: every intermediate product rounded to bfloat16 and read
# back as float, which the fusion must keep (no rounding step may be
# dropped). Input gradient out, bf16 [B, T, 4H].
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id21(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[2, 1, 0])
    T1 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[2, 1, 0])
    T2 = fd.ops.cast(T1, dtype=DataType.Float)
    S3 = fd.define_scalar(0.797885, dtype=DataType.Double)
    T4 = fd.ops.mul(S3, T2)
    T5 = fd.ops.cast(T4, dtype=DataType.BFloat16)
    S6 = fd.define_scalar(0.0447150, dtype=DataType.Double)
    T7 = fd.ops.mul(S6, T2)
    T8 = fd.ops.cast(T7, dtype=DataType.BFloat16)
    T9 = fd.ops.cast(T8, dtype=DataType.Float)
    T10 = fd.ops.mul(T9, T2)
    T11 = fd.ops.cast(T10, dtype=DataType.BFloat16)
    T12 = fd.ops.cast(T11, dtype=DataType.Float)
    S13 = fd.define_scalar(1.00000, dtype=DataType.Double)
    T14 = fd.ops.add(S13, T12)
    T15 = fd.ops.cast(T14, dtype=DataType.BFloat16)
    T16 = fd.ops.cast(T5, dtype=DataType.Float)
    T17 = fd.ops.cast(T15, dtype=DataType.Float)
    T18 = fd.ops.mul(T16, T17)
    T19 = fd.ops.cast(T18, dtype=DataType.BFloat16)
    T20 = fd.ops.cast(T19, dtype=DataType.Float)
    T21 = fd.ops.tanh(T20)
    T22 = fd.ops.cast(T21, dtype=DataType.BFloat16)
    T23 = fd.ops.cast(T22, dtype=DataType.Float)
    S24 = fd.define_scalar(0.500000, dtype=DataType.Double)
    T25 = fd.ops.mul(S24, T2)
    T26 = fd.ops.cast(T25, dtype=DataType.BFloat16)
    T27 = fd.ops.mul(T23, T23)
    T28 = fd.ops.cast(T27, dtype=DataType.BFloat16)
    T29 = fd.ops.cast(T28, dtype=DataType.Float)
    T30 = fd.ops.sub(S13, T29)
    T31 = fd.ops.cast(T30, dtype=DataType.BFloat16)
    S32 = fd.define_scalar(0.107032, dtype=DataType.Double)
    T33 = fd.ops.mul(S32, T2)
    T34 = fd.ops.cast(T33, dtype=DataType.BFloat16)
    T35 = fd.ops.cast(T34, dtype=DataType.Float)
    T36 = fd.ops.mul(T35, T2)
    T37 = fd.ops.cast(T36, dtype=DataType.BFloat16)
    T38 = fd.ops.cast(T37, dtype=DataType.Float)
    T39 = fd.ops.add(S3, T38)
    T40 = fd.ops.cast(T39, dtype=DataType.BFloat16)
    T41 = fd.ops.cast(T31, dtype=DataType.Float)
    T42 = fd.ops.cast(T40, dtype=DataType.Float)
    T43 = fd.ops.mul(T41, T42)
    T44 = fd.ops.cast(T43, dtype=DataType.BFloat16)
    T45 = fd.ops.cast(T26, dtype=DataType.Float)
    T46 = fd.ops.cast(T44, dtype=DataType.Float)
    T47 = fd.ops.mul(T45, T46)
    T48 = fd.ops.cast(T47, dtype=DataType.BFloat16)
    T49 = fd.ops.add(S13, T23)
    T50 = fd.ops.cast(T49, dtype=DataType.BFloat16)
    T51 = fd.ops.cast(T50, dtype=DataType.Float)
    T52 = fd.ops.mul(S24, T51)
    T53 = fd.ops.cast(T52, dtype=DataType.BFloat16)
    T54 = fd.ops.cast(T48, dtype=DataType.Float)
    T55 = fd.ops.cast(T53, dtype=DataType.Float)
    T56 = fd.ops.add(T54, T55)
    T57 = fd.ops.cast(T56, dtype=DataType.BFloat16)
    T58 = fd.ops.cast(T57, dtype=DataType.Float)
    T59 = fd.ops.cast(T0, dtype=DataType.Float)
    T60 = fd.ops.mul(T58, T59)
    T61 = fd.ops.cast(T60, dtype=DataType.BFloat16)
    fd.add_output(T61)


with FusionDefinition() as fd:
    nvfuser_fusion_id21(fd)

inputs = [
    torch.testing.make_tensor((4, 2048, 4096), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((4, 2048, 4096), dtype=torch.bfloat16, device='cuda:0'),
]
fd.execute(inputs)
