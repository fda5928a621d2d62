// The random numbers of `uniform` and `normal`, defined bit for bit.
//
// Element i (the linear, row-major index in the op's output shape) of a
// random op with integer seed S and offset O is computed from words of
// Philox4x32-10 block b (Salmon et al., "Parallel random numbers: as easy as
// 1, 2, 3", SC'11): key (S mod 2^32, S >> 32), counter (b mod 2^32, b >> 32,
// O mod 2^32, O >> 32), S and O taken as 64-bit two's complement; a block's
// four words x0..x3 serve consecutive elements:
//   float (also half, bfloat16: computed in float, rounded once):
//     uniform: b = i / 4, w = x[i % 4]
//       u  = (w >> 8) * 2^-24                       in [0, 1)
//       uniform(lo, hi) = lo + (hi - lo) * u        (float ops, each rounded)
//     normal: b = i / 2, (w1, w2) = (x[2 (i % 2)], x[2 (i % 2) + 1])
//       u1 = ((w1 >> 8) + 1) * 2^-24, u2 = (w2 >> 8) * 2^-24
//       normal(mean, std) = mean + std * sqrt(-2 log u1) * cos(2 pi u2)
//   double: uniform b = i / 2, u = ((w1 << 21) | (w2 >> 11)) * 2^-53;
//     normal b = i, u1 from (x0, x1) + 1 and u2 from (x2, x3) the same way;
//     the same formulas in double.
// log and cos are our own (range reduction and fixed polynomials) and every
// operation is an explicit IEEE one (add, sub, mul, div, sqrt, fma: round
// to nearest even), so the CPU reference and the generated kernels compute
// the same bits: the code below is compiled here and, as text, into the
// kernels that use random ops (PhiloxDeviceSource). So the numbers depend
// on (seed, offset, index) only, never on a schedule, a segmentation or a
// launch shape.
#ifndef FUSIOND_COMPILER_IR_PHILOX_H_
#define FUSIOND_COMPILER_IR_PHILOX_H_

#include <array>
#include <cstdint>

namespace fusiond {

// The four 32-bit words of Philox4x32-10 for (key, counter).
std::array<uint32_t, 4> Philox4x32(std::array<uint32_t, 2> key, std::array<uint32_t, 4> ctr);

// Element `index` of uniform / normal with the given seed and offset, in
// float (for float, half and bfloat16 results) and in double.
float PhiloxUniformFloat(float lo, float hi, uint64_t seed, uint64_t offset, uint64_t index);
double PhiloxUniformDouble(double lo, double hi, uint64_t seed, uint64_t offset, uint64_t index);
float PhiloxNormalFloat(float mean, float std, uint64_t seed, uint64_t offset, uint64_t index);
double PhiloxNormalDouble(double mean, double std, uint64_t seed, uint64_t offset, uint64_t index);

// The same functions as CUDA C++ (fz_uniform_f, fz_uniform_d, fz_normal_f,
// fz_normal_d over unsigned long long seed, offset and index), for the
// prelude of kernels with random ops.
const char* PhiloxDeviceSource();

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_IR_PHILOX_H_
