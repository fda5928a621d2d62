// corpus::CheckOutput fails known-wrong outputs of two corpus fusions and
// passes right ones: a kernel's output is simulated by the closed form
// rounded to the output's dtype, checked against the reference interpreter's
// evaluation of the definition. The wrong ones: layernorm_bwd_thunder
// without its mean-gradient term and rmsnorm_bwd_thunder without the bf16
// round trip on rstd (both pass the max-norm measure max|a-b|/max|b| <=
// 1e-2 the GPU harness used), a NaN, a wrong dtype, a wrong shape.
#include "tests/corpus/output_check.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "compiler/frontend/frontend.h"
#include "tests/corpus/closed_forms.h"
#include "tests/corpus/corpus_inputs.h"

namespace fusiond {
namespace {

// What a kernel writes: every value rounded to the output's dtype.
HostTensor AsKernelOutput(HostTensor t) {
  for (double& v : t.data) v = RoundTo(t.dtype, v);
  return t;
}

double MaxNormError(const HostTensor& a, const HostTensor& b) {
  double diff = 0, scale = 0;
  for (size_t i = 0; i < a.data.size(); ++i) {
    diff = std::max(diff, std::fabs(a.data[i] - b.data[i]));
    scale = std::max(scale, std::fabs(b.data[i]));
  }
  return diff / scale;
}

struct Mutation {
  const char* file;
  corpus::Tensors (*right)(const corpus::Tensors&);
  corpus::Tensors (*wrong)(const corpus::Tensors&);
  size_t output;  // the output the mutation changes
};

// Test names show the file, not the bytes.
void PrintTo(const Mutation& m, std::ostream* os) { *os << m.file; }

class KnownWrongOutputs : public ::testing::TestWithParam<Mutation> {};

TEST_P(KnownWrongOutputs, FailTheCheckThatRightOnesPass) {
  const Mutation& m = GetParam();
  auto parsed = ParseReproFile(std::string(FUSIOND_CORPUS_DIR) + "/" + m.file);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  auto inputs = corpus::MakeCorpusInputs(parsed->graph, parsed->inputs, parsed->input_shapes, 7);
  auto ref = Evaluate(parsed->graph, inputs);
  ASSERT_TRUE(ref.ok()) << ref.status();
  corpus::Tensors right = m.right(inputs), wrong = m.wrong(inputs);
  ASSERT_EQ(right.size(), ref->size());
  for (size_t k = 0; k < right.size(); ++k) {
    const corpus::OutputVerdict v = corpus::CheckOutput(AsKernelOutput(right[k]), (*ref)[k]);
    EXPECT_TRUE(v.pass) << "right output " << k << ": " << v.why;
  }
  const HostTensor bad = AsKernelOutput(wrong[m.output]);
  const corpus::OutputVerdict v = corpus::CheckOutput(bad, (*ref)[m.output]);
  EXPECT_FALSE(v.pass) << "the known-wrong output " << m.output << " passed: error " << v.error;
  const double max_norm = MaxNormError(bad, (*ref)[m.output]);
  EXPECT_LT(max_norm, 1e-2) << "the max-norm measure already fails it";
  std::cout << m.file << " known-wrong output " << m.output << ": error " << v.error
            << " (max-norm measure " << max_norm << ")\n";

  // A NaN where the reference has none; a wrong dtype; a wrong shape.
  HostTensor nan = AsKernelOutput(right[m.output]);
  nan.data[nan.data.size() / 2] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_FALSE(corpus::CheckOutput(nan, (*ref)[m.output]).pass);
  HostTensor as_float = AsKernelOutput(right[m.output]);
  as_float.dtype = DataType::kFloat;
  const corpus::OutputVerdict dtype = corpus::CheckOutput(as_float, (*ref)[m.output]);
  EXPECT_FALSE(dtype.pass);
  EXPECT_EQ(dtype.why, "dtype float32, expected bfloat16");
  HostTensor reshaped = AsKernelOutput(right[m.output]);
  reshaped.shape = {static_cast<int64_t>(reshaped.data.size())};
  EXPECT_FALSE(corpus::CheckOutput(reshaped, (*ref)[m.output]).pass);
}

INSTANTIATE_TEST_SUITE_P(
    Corpus, KnownWrongOutputs,
    ::testing::Values(Mutation{"layernorm_bwd_thunder.py", corpus::LayerNormBackwardThunder,
                               corpus::LayerNormBackwardThunderWithoutMeanGradient, 0},
                      Mutation{"rmsnorm_bwd_thunder.py", corpus::RmsNormBackwardThunder,
                               corpus::RmsNormBackwardThunderWithoutRstdRounding, 1}),
    [](const ::testing::TestParamInfo<Mutation>& info) {
      return std::string(info.param.file).substr(0, std::string(info.param.file).find('.'));
    });

TEST(OutputCheck, Limits) {
  EXPECT_EQ(corpus::OutputTolerance(DataType::kBFloat16), 2e-2);
  EXPECT_EQ(corpus::OutputTolerance(DataType::kHalf), 2e-3);
  EXPECT_EQ(corpus::OutputTolerance(DataType::kFloat), 1e-4);
  EXPECT_EQ(corpus::OutputTolerance(DataType::kInt64), 0.0);
  HostTensor want{DataType::kFloat, {3}, {100, -2, 0}};
  EXPECT_TRUE(corpus::CheckOutput(HostTensor{DataType::kFloat, {3}, {100, -2.0001, 0}}, want).pass);
  EXPECT_FALSE(corpus::CheckOutput(HostTensor{DataType::kFloat, {3}, {100, -2.001, 0}}, want).pass);
  HostTensor ints{DataType::kInt64, {2}, {1, 2}};
  EXPECT_TRUE(corpus::CheckOutput(ints, ints).pass);
  EXPECT_FALSE(corpus::CheckOutput(HostTensor{DataType::kInt64, {2}, {1, 3}}, ints).pass);
}

}  // namespace
}  // namespace fusiond
