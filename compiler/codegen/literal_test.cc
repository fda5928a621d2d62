// Literals in generated CUDA: for every dtype and every double (overflowing,
// non-finite, subnormal, signed zero), valid CUDA C++ holding the value the
// CPU reference gives the constant; NVRTC reads each to that exact value.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/codegen/expr_emitter.h"
#include "compiler/ir/builder.h"
#include "compiler/nvrtc/nvrtc_compiler.h"
#include "compiler/pipeline.h"
#include "compiler/reference/reference.h"

namespace fusiond {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
// Halfway between FLT_MAX and 2^128: rounds (to even) to +inf in float32.
constexpr double kFloatOverflowMid = 3.4028235677973366e38;

struct Case {
  double v;
  DataType t;
  const char* literal;
};

const char* const kFInf = "__int_as_float(0x7f800000)";
const char* const kFNegInf = "(-__int_as_float(0x7f800000))";
const char* const kFNan = "__int_as_float(0x7fc00000)";

const std::vector<Case>& Cases() {
  static const std::vector<Case> cases = {
      {0.5, DataType::kFloat, "(5.000000000e-01f)"},
      {1e308, DataType::kFloat, kFInf},
      {-1e308, DataType::kFloat, kFNegInf},
      {kInf, DataType::kFloat, kFInf},
      {-kInf, DataType::kFloat, kFNegInf},
      {kNan, DataType::kFloat, kFNan},
      {kFloatOverflowMid, DataType::kFloat, kFInf},
      {std::nextafter(kFloatOverflowMid, 0.0), DataType::kFloat, "(3.402823466e+38f)"},
      {-0.0, DataType::kFloat, "(-0.000000000e+00f)"},
      {1e-45, DataType::kFloat, "(1.401298464e-45f)"},  // the smallest subnormal
      {1e-50, DataType::kFloat, "(0.000000000e+00f)"},
      {-1e-50, DataType::kFloat, "(-0.000000000e+00f)"},
      {0.1, DataType::kHalf, "(9.997558594e-02f)"},
      {65504, DataType::kHalf, "(6.550400000e+04f)"},
      {65520, DataType::kHalf, kFInf},
      {-1e5, DataType::kHalf, kFNegInf},
      {1e-8, DataType::kHalf, "(0.000000000e+00f)"},
      {6e-8, DataType::kHalf, "(5.960464478e-08f)"},  // fp16's smallest subnormal
      {0.1, DataType::kBFloat16, "(1.000976562e-01f)"},
      {3.4e38, DataType::kBFloat16, kFInf},
      {1e308, DataType::kBFloat16, kFInf},
      {500, DataType::kFloat8E4M3, kFNan},  // e4m3fn has no infinity
      {1e5, DataType::kFloat8E5M2, kFInf},
      {0.1, DataType::kDouble, "(1.00000000000000006e-01)"},
      {1e308, DataType::kDouble, "(1.00000000000000001e+308)"},
      {kInf, DataType::kDouble, "__longlong_as_double(0x7ff0000000000000LL)"},
      {-kInf, DataType::kDouble, "(-__longlong_as_double(0x7ff0000000000000LL))"},
      {kNan, DataType::kDouble, "__longlong_as_double(0x7ff8000000000000LL)"},
      {5e-324, DataType::kDouble, "(4.94065645841246544e-324)"},
      {-0.0, DataType::kDouble, "(-0.00000000000000000e+00)"},
      {3, DataType::kInt64, "((i64)3LL)"},
      {-9223372036854775808.0, DataType::kInt64, "((i64)(-9223372036854775807LL - 1LL))"},
      {4611686018427387904.0, DataType::kInt64, "((i64)4611686018427387904LL)"},
      {-0.0, DataType::kInt64, "((i64)0LL)"},
      {2147483648.0, DataType::kInt32, "((int)-2147483648LL)"},  // wraps, as the reference
      {3e9, DataType::kInt32, "((int)-1294967296LL)"},
      {1, DataType::kBool, "true"},
      {0, DataType::kBool, "false"},
      {-0.0, DataType::kBool, "false"},
      {kNan, DataType::kBool, "true"},
  };
  return cases;
}

TEST(Literal, EveryDtypeAndEdgeValue) {
  for (const Case& c : Cases()) {
    EXPECT_EQ(Literal(c.v, c.t), c.literal) << c.v << " as " << DataTypeName(c.t);
  }
}

// A literal reads back (as the host's strtod would) to the reference's value.
TEST(Literal, FiniteFloatingLiteralsHoldTheReferenceValue) {
  for (const Case& c : Cases()) {
    if (!IsFloatingPoint(c.t)) continue;
    const double want = RoundTo(c.t, c.v);
    const std::string lit = Literal(c.v, c.t);
    if (!std::isfinite(want)) {
      EXPECT_EQ(lit.find("e+"), std::string::npos) << lit;
      continue;
    }
    const double got = c.t == DataType::kDouble ? std::strtod(lit.c_str() + 1, nullptr)
                                                : std::strtof(lit.c_str() + 1, nullptr);
    EXPECT_EQ(got, want) << lit;
    EXPECT_EQ(std::signbit(got), std::signbit(want)) << lit;
  }
}

std::string HexFloat(double v, bool f) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%a%s", v, f ? "f" : "");
  return buf;
}

// NVRTC accepts every literal, and (static_assert) reads each finite
// floating one to the bits of the reference's value written in hex.
TEST(Literal, NvrtcReadsEveryLiteralExactly) {
  if (NvrtcVersion() == "none") GTEST_SKIP() << "no NVRTC in this build";
  std::string src = "typedef long long i64;\n";
  std::string body;
  int k = 0;
  for (const Case& c : Cases()) {
    const std::string lit = Literal(c.v, c.t);
    const double want = RoundTo(c.t, c.v);
    const std::string type = ComputeTypeName(c.t);
    if (IsFloatingPoint(c.t) && std::isfinite(want)) {
      absl::StrAppend(&src, "static_assert(", lit, " == ", HexFloat(want, c.t != DataType::kDouble),
                      ", \"", lit, "\");\n");
    }
    absl::StrAppend(&body, "  ((", type, "*)out)[", k++, "] = ", lit, ";\n");
  }
  absl::StrAppend(&src, "extern \"C\" __global__ void literal_k(double* out) {\n", body, "}\n");
  auto out = CompileWithNvrtc(src, "literal_k", NvrtcOptions{});
  ASSERT_TRUE(out.ok()) << out.status() << "\n" << src;
}

// A float32 constant beyond FLT_MAX (1e308: +inf, as the reference rounds
// it) in a whole fusion, and such constants of the other floating dtypes,
// compile with NVRTC.
TEST(Literal, OverflowingConstantsCompileThroughThePipeline) {
  if (NvrtcVersion() == "none") GTEST_SKIP() << "no NVRTC in this build";
  for (DataType t : {DataType::kFloat, DataType::kHalf, DataType::kBFloat16, DataType::kDouble}) {
    Graph g;
    GraphBuilder b(&g);
    ValueId x = *b.DefineTensor("x", t, {8, 8});
    ValueId big = b.DefineConstant(t == DataType::kDouble ? kInf : 1e308, t);
    ValueId tiny = b.DefineConstant(t == DataType::kDouble ? 5e-324 : -1e-300, t);
    ValueId y = *b.Binary(OpKind::kMul, x, big);
    ASSERT_TRUE(b.AddOutput(*b.Binary(OpKind::kAdd, y, tiny)).ok());
    auto r = CompileFusion(g, {}, CompileOptions{});
    ASSERT_TRUE(r.ok()) << DataTypeName(t) << ": " << r.status();
    ASSERT_FALSE(r->segments.empty());
    EXPECT_EQ(r->segments[0].kernel->cuda_source.find("inff"), std::string::npos);
  }
}

}  // namespace
}  // namespace fusiond
