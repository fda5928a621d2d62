# YOLOv5/v8 box regression loss (bbox_iou with CIoU=True) over the
# assigned anchors of a batch: the xyxy columns taken with fd.ops.slice
# (Thunder's newer spelling with manual_normalization=0), intersection,
# union, the enclosing box, the aspect-ratio term
# v = 4 / pi^2 * (atan(w2 / h2) - atan(w1 / h1))^2 with fd.ops.atan, then
# sum((1 - ciou) * weight) / target_scores_sum (a Float scalar input).
# Checked at its own sizes (5 MB: the sum splits over every SM only from 1 MB).
# expect: compiles
# small: 134400->134400
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id31(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[134400, 4], contiguity=[True, True], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    T1 = fd.define_tensor(shape=[134400, 4], contiguity=[True, True], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    T2 = fd.define_tensor(shape=[134400, 1], contiguity=[True, None], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    S3 = fd.define_scalar(None, dtype=DataType.Float)
    T4 = fd.ops.slice(T0, start_indices=[0, 0], end_indices=[134400, 1], strides=[1, 1], manual_normalization=0)
    T5 = fd.ops.slice(T0, start_indices=[0, 1], end_indices=[134400, 2], strides=[1, 1], manual_normalization=0)
    T6 = fd.ops.slice(T0, start_indices=[0, 2], end_indices=[134400, 3], strides=[1, 1], manual_normalization=0)
    T7 = fd.ops.slice(T0, start_indices=[0, 3], end_indices=[134400, 4], strides=[1, 1], manual_normalization=0)
    T8 = fd.ops.slice(T1, start_indices=[0, 0], end_indices=[134400, 1], strides=[1, 1], manual_normalization=0)
    T9 = fd.ops.slice(T1, start_indices=[0, 1], end_indices=[134400, 2], strides=[1, 1], manual_normalization=0)
    T10 = fd.ops.slice(T1, start_indices=[0, 2], end_indices=[134400, 3], strides=[1, 1], manual_normalization=0)
    T11 = fd.ops.slice(T1, start_indices=[0, 3], end_indices=[134400, 4], strides=[1, 1], manual_normalization=0)
    T12 = fd.ops.sub(T6, T4)
    T13 = fd.ops.sub(T7, T5)
    S14 = fd.define_scalar(1.00000e-07, dtype=DataType.Double)
    T15 = fd.ops.add(T13, S14)
    T16 = fd.ops.sub(T10, T8)
    T17 = fd.ops.sub(T11, T9)
    T18 = fd.ops.add(T17, S14)
    T19 = fd.ops.minimum(T6, T10)
    T20 = fd.ops.maximum(T4, T8)
    T21 = fd.ops.sub(T19, T20)
    S22 = fd.define_scalar(0.00000, dtype=DataType.Double)
    T23 = fd.ops.maximum(T21, S22)
    T24 = fd.ops.minimum(T7, T11)
    T25 = fd.ops.maximum(T5, T9)
    T26 = fd.ops.sub(T24, T25)
    T27 = fd.ops.maximum(T26, S22)
    T28 = fd.ops.mul(T23, T27)
    T29 = fd.ops.mul(T12, T15)
    T30 = fd.ops.mul(T16, T18)
    T31 = fd.ops.add(T29, T30)
    T32 = fd.ops.sub(T31, T28)
    T33 = fd.ops.add(T32, S14)
    T34 = fd.ops.div(T28, T33)
    T35 = fd.ops.maximum(T6, T10)
    T36 = fd.ops.minimum(T4, T8)
    T37 = fd.ops.sub(T35, T36)
    T38 = fd.ops.maximum(T7, T11)
    T39 = fd.ops.minimum(T5, T9)
    T40 = fd.ops.sub(T38, T39)
    T41 = fd.ops.mul(T37, T37)
    T42 = fd.ops.mul(T40, T40)
    T43 = fd.ops.add(T41, T42)
    T44 = fd.ops.add(T43, S14)
    T45 = fd.ops.add(T8, T10)
    T46 = fd.ops.sub(T45, T4)
    T47 = fd.ops.sub(T46, T6)
    T48 = fd.ops.mul(T47, T47)
    T49 = fd.ops.add(T9, T11)
    T50 = fd.ops.sub(T49, T5)
    T51 = fd.ops.sub(T50, T7)
    T52 = fd.ops.mul(T51, T51)
    T53 = fd.ops.add(T48, T52)
    S54 = fd.define_scalar(0.250000, dtype=DataType.Double)
    T55 = fd.ops.mul(T53, S54)
    T56 = fd.ops.div(T16, T18)
    T57 = fd.ops.atan(T56)
    T58 = fd.ops.div(T12, T15)
    T59 = fd.ops.atan(T58)
    T60 = fd.ops.sub(T57, T59)
    T61 = fd.ops.mul(T60, T60)
    S62 = fd.define_scalar(0.405285, dtype=DataType.Double)
    T63 = fd.ops.mul(T61, S62)
    T64 = fd.ops.sub(T63, T34)
    S65 = fd.define_scalar(1.00000, dtype=DataType.Double)
    T66 = fd.ops.add(T64, S65)
    T67 = fd.ops.add(T66, S14)
    T68 = fd.ops.div(T63, T67)
    T69 = fd.ops.div(T55, T44)
    T70 = fd.ops.mul(T63, T68)
    T71 = fd.ops.add(T69, T70)
    T72 = fd.ops.sub(T34, T71)
    T73 = fd.ops.sub(S65, T72)
    T74 = fd.ops.mul(T73, T2)
    T75 = fd.ops.sum(T74, dims=[0, 1], keepdim=False, dtype=DataType.Null)
    T76 = fd.ops.div(T75, S3)
    fd.add_output(T76)
    fd.add_output(T72)


with FusionDefinition() as fd:
    nvfuser_fusion_id31(fd)

inputs = [
    torch.testing.make_tensor((134400, 4), dtype=torch.float32, device='cuda:0', low=0, high=640),
    torch.testing.make_tensor((134400, 4), dtype=torch.float32, device='cuda:0', low=0, high=640),
    torch.testing.make_tensor((134400, 1), dtype=torch.float32, device='cuda:0', low=0, high=1),
    2048.5,
]
fd.execute(inputs)
