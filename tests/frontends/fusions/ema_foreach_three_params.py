# An EMA of model weights (timm ModelEmaV2, diffusion EMA) over one layer's
# parameters as torch._foreach_lerp_ lowers in one horizontal fusion:
# ema = ema + (1 - decay) * (w - ema) for a bf16 weight [4096, 4096], its
# bias [4096] and a norm weight [4096], each EMA in float32; the decay
# arrives as a 0-dim CPU tensor. Three unrelated shapes. The update is in
# place (Thunder's copy_: fd.ops.set, then add_output aliased to the EMA
# input), which needs the runtime to write into an input's buffer.
# expect: pending alias_input
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id74(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T2 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float, is_cpu=False, stride_order=[0])
    T3 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[0])
    T4 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float, is_cpu=False, stride_order=[0])
    T5 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[0])
    T6 = fd.define_tensor(shape=[], contiguity=[], dtype=DataType.Float, is_cpu=True)
    S7 = fd.define_scalar(1.00000, dtype=DataType.Double)
    T8 = fd.ops.sub(S7, T6)
    T9 = fd.ops.cast(T1, dtype=DataType.Float)
    T10 = fd.ops.lerp(T0, T9, T8)
    T11 = fd.ops.cast(T3, dtype=DataType.Float)
    T12 = fd.ops.lerp(T2, T11, T8)
    T13 = fd.ops.cast(T5, dtype=DataType.Float)
    T14 = fd.ops.lerp(T4, T13, T8)
    T15 = fd.ops.set(T10)
    fd.add_output(T15, T0)
    T16 = fd.ops.set(T12)
    fd.add_output(T16, T2)
    T17 = fd.ops.set(T14)
    fd.add_output(T17, T4)


with FusionDefinition() as fd:
    nvfuser_fusion_id74(fd)

inputs = [
    torch.testing.make_tensor((4096, 4096), dtype=torch.float32, device='cuda:0'),
    torch.testing.make_tensor((4096, 4096), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((4096,), dtype=torch.float32, device='cuda:0'),
    torch.testing.make_tensor((4096,), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((4096,), dtype=torch.float32, device='cuda:0'),
    torch.testing.make_tensor((4096,), dtype=torch.bfloat16, device='cuda:0'),
    torch.tensor(0.9999, dtype=torch.float32),
]
fd.execute(inputs)
