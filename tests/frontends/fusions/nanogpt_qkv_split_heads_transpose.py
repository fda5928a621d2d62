# nanoGPT CausalSelfAttention before SDPA as Thunder fuses it: the c_attn
# matmul output [B * T, 3 * C] viewed as [B, T, 3 * C], split into q, k, v
# with fd.ops.slice, each viewed as [B, T, nh, hs] and transposed to
# [B, nh, T, hs] with fd.ops.permute for the attention kernel; bf16, static
# shapes. Only layout ops: one pointwise kernel (each slice window starts on
# a head boundary, so reshape_views reads the input as [4, 1024, 36, 64]).
# expect: compiles
# small: 4096->256, 1024->64
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id36(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[4096, 2304], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T1 = fd.ops.reshape(T0, new_shape=[4, 1024, 2304])
    T2 = fd.ops.slice(T1, start_indices=[0, 0, 0], end_indices=[4, 1024, 768], strides=[1, 1, 1], manual_normalization=0)
    T3 = fd.ops.slice(T1, start_indices=[0, 0, 768], end_indices=[4, 1024, 1536], strides=[1, 1, 1], manual_normalization=0)
    T4 = fd.ops.slice(T1, start_indices=[0, 0, 1536], end_indices=[4, 1024, 2304], strides=[1, 1, 1], manual_normalization=0)
    T5 = fd.ops.reshape(T3, new_shape=[4, 1024, 12, 64])
    T6 = fd.ops.permute(T5, dims=[0, 2, 1, 3])
    T7 = fd.ops.reshape(T2, new_shape=[4, 1024, 12, 64])
    T8 = fd.ops.permute(T7, dims=[0, 2, 1, 3])
    T9 = fd.ops.reshape(T4, new_shape=[4, 1024, 12, 64])
    T10 = fd.ops.permute(T9, dims=[0, 2, 1, 3])
    fd.add_output(T6)
    fd.add_output(T8)
    fd.add_output(T10)


with FusionDefinition() as fd:
    nvfuser_fusion_id36(fd)

inputs = [
    torch.testing.make_tensor((4096, 2304), dtype=torch.bfloat16, device='cuda:0'),
]
fd.execute(inputs)
