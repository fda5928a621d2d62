#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "compiler/reference/reference.h"

namespace fusiond {
namespace {

const double kInf = std::numeric_limits<double>::infinity();

TEST(Rounding, BFloat16KnownValues) {
  const DataType t = DataType::kBFloat16;
  EXPECT_EQ(RoundTo(t, 1.0), 1.0);
  EXPECT_EQ(RoundTo(t, 3.14159265358979), 3.140625);
  EXPECT_EQ(RoundTo(t, 0.1), 0.10009765625);
  // Ties go to the even neighbour: 1 + half an ulp stays at 1, 1 + 1.5 ulp
  // goes up to 1 + 2 ulp.
  EXPECT_EQ(RoundTo(t, 1.0 + std::ldexp(1, -8)), 1.0);
  EXPECT_EQ(RoundTo(t, 1.0 + 3 * std::ldexp(1, -8)), 1.0 + std::ldexp(1, -6));
  EXPECT_EQ(RoundTo(t, 1.0 + std::ldexp(1, -8) + std::ldexp(1, -30)), 1.0 + std::ldexp(1, -7));
  EXPECT_EQ(RoundTo(t, -2.5), -2.5);
  EXPECT_EQ(RoundTo(t, 257.0), 256.0);
  EXPECT_EQ(RoundTo(t, 259.0), 260.0);
}

TEST(Rounding, BFloat16RangeEdges) {
  const DataType t = DataType::kBFloat16;
  const double max = std::ldexp(2.0 - std::ldexp(1, -7), 127);
  EXPECT_EQ(RoundTo(t, max), max);
  EXPECT_EQ(RoundTo(t, std::ldexp(2.0 - std::ldexp(1, -8), 127)), kInf);  // tie to even
  EXPECT_EQ(RoundTo(t, -1e39), -kInf);
  // Subnormals: the smallest is 2^-133; half of it ties to zero.
  EXPECT_EQ(RoundTo(t, std::ldexp(1, -133)), std::ldexp(1, -133));
  EXPECT_EQ(RoundTo(t, std::ldexp(1, -134)), 0.0);
  EXPECT_EQ(RoundTo(t, 1.5 * std::ldexp(1, -134)), std::ldexp(1, -133));
  EXPECT_EQ(RoundTo(t, 3 * std::ldexp(1, -133)), 3 * std::ldexp(1, -133));
  EXPECT_TRUE(std::signbit(RoundTo(t, -1e-300)));
  EXPECT_TRUE(std::isnan(RoundTo(t, std::nan(""))));
  EXPECT_EQ(RoundTo(t, -kInf), -kInf);
}

TEST(Rounding, HalfKnownValues) {
  const DataType t = DataType::kHalf;
  EXPECT_EQ(RoundTo(t, 0.1), 0.0999755859375);
  EXPECT_EQ(RoundTo(t, 1.0 / 3), 0.333251953125);
  EXPECT_EQ(RoundTo(t, 2049.0), 2048.0);
  EXPECT_EQ(RoundTo(t, 2051.0), 2052.0);
  EXPECT_EQ(RoundTo(t, 65504.0), 65504.0);
  EXPECT_EQ(RoundTo(t, 65519.0), 65504.0);
  EXPECT_EQ(RoundTo(t, 65520.0), kInf);
  EXPECT_EQ(RoundTo(t, std::ldexp(1, -24)), std::ldexp(1, -24));
  EXPECT_EQ(RoundTo(t, std::ldexp(1, -25)), 0.0);
  EXPECT_EQ(RoundTo(t, 3 * std::ldexp(1, -26)), std::ldexp(1, -24));
  EXPECT_EQ(RoundTo(t, 1e-5), 1.0013580322265625e-05);  // a subnormal
  EXPECT_TRUE(std::isnan(RoundTo(t, std::nan(""))));
}

TEST(Rounding, FloatAndIntegersAndBool) {
  EXPECT_EQ(RoundTo(DataType::kFloat, 0.1), static_cast<double>(0.1f));
  EXPECT_EQ(RoundTo(DataType::kDouble, 0.1), 0.1);
  EXPECT_EQ(RoundTo(DataType::kInt32, 3.9), 3.0);
  EXPECT_EQ(RoundTo(DataType::kInt32, -2.7), -2.0);
  EXPECT_EQ(RoundTo(DataType::kInt32, 2147483648.0), -2147483648.0);
  EXPECT_EQ(RoundTo(DataType::kInt32, 4294967297.0), 1.0);
  EXPECT_EQ(RoundTo(DataType::kInt64, std::ldexp(1, 63)), -std::ldexp(1, 63));
  EXPECT_EQ(RoundTo(DataType::kInt64, std::nan("")), 0.0);
  EXPECT_EQ(RoundTo(DataType::kInt32, kInf), 0.0);
  EXPECT_EQ(RoundTo(DataType::kBool, 0.5), 1.0);
  EXPECT_EQ(RoundTo(DataType::kBool, 0.0), 0.0);
  EXPECT_EQ(RoundTo(DataType::kBool, -3.0), 1.0);
}

// Every float rounds to bf16 as the well-known bit trick does (float input,
// so there is no double rounding to tell them apart).
TEST(Rounding, BFloat16MatchesFloatBitTrick) {
  std::mt19937 rng(7);
  for (int i = 0; i < 200000; ++i) {
    uint32_t bits = rng();
    float f;
    std::memcpy(&f, &bits, 4);
    if (std::isnan(f)) continue;
    uint32_t r = (bits + 0x7fff + ((bits >> 16) & 1)) & 0xffff0000u;
    float want;
    std::memcpy(&want, &r, 4);
    ASSERT_EQ(RoundTo(DataType::kBFloat16, f), static_cast<double>(want))
        << "bits " << std::hex << bits;
  }
}

#ifdef __FLT16_MANT_DIG__
// Against the compiler's own double -> _Float16 conversion.
TEST(Rounding, HalfMatchesCompilerConversion) {
  std::mt19937_64 rng(11);
  for (int i = 0; i < 200000; ++i) {
    // Magnitudes from 2^-30 to 2^17, covering subnormals and overflow.
    double v = std::ldexp(static_cast<double>(rng() >> 11) * 0x1.0p-53, int(rng() % 48) - 30);
    if (rng() & 1) v = -v;
    ASSERT_EQ(RoundTo(DataType::kHalf, v), static_cast<double>(static_cast<_Float16>(v))) << v;
  }
}
#endif

}  // namespace
}  // namespace fusiond
