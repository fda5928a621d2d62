// fp8 fusions through the C++ runtime without a GPU: the compiler's
// manifests of the fp8 repro files (tests/frontends, tests/ops) load, name
// each input's and output's fp8 dtype, plan at the sizes compiled for and
// refuse tensors of the other fp8 format; and the runtime's fp8 values are
// the CPU reference's (every code is a value the reference rounds to itself,
// and the GPU check's encoding gives it back).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "client/runtime/launch_plan.h"
#include "client/runtime/loaded_fusion.h"
#include "client/runtime/manifest.h"
#include "compiler/frontend/frontend.h"
#include "compiler/pipeline.h"
#include "compiler/reference/reference.h"
#include "tests/runtime_e2e/gpu_run.h"
#include "tests/runtime_e2e/manifest_without_binaries.h"

namespace fusiond {
namespace {

using runtime::ElementType;

std::string Source(const std::string& rel) {
  const char* d = std::getenv("FUSIOND_SOURCE_DIR");
  return absl::StrCat(d ? d : ".", "/", rel);
}

bool IsFp8(ElementType t) { return t == ElementType::kFloat8E4M3 || t == ElementType::kFloat8E5M2; }

// Its manifest's dtype is the graph value's.
void ExpectDtype(const Graph& g, ValueId v, const runtime::ManifestTensor& t,
                 const std::string& where) {
  EXPECT_EQ(runtime::ElementTypeName(t.dtype), DataTypeName(g.value(v).dtype)) << where;
}

TEST(Fp8Manifest, FusionsLoadPlanAndCheckDtypes) {
  int fp8_tensors = 0;
  for (const char* rel : {"tests/frontends/fusions/fp8_amax_scale_cast_e4m3.py",
                          "tests/frontends/fusions/fp8_delayed_scaling_cast_e5m2.py",
                          "tests/frontends/fusions/fp8_per_channel_amax_outer_axes.py",
                          "tests/ops/fusions/fp8_scale_2048x8192.py"}) {
    SCOPED_TRACE(rel);
    auto p = ParseReproFile(Source(rel));
    ASSERT_TRUE(p.ok()) << p.status();
    CompileOptions co;
    co.generate_code = false;
    auto r = CompileFusion(p->graph, p->input_shapes, co);
    ASSERT_TRUE(r.ok()) << r.status();
    auto json = ManifestWithoutBinaries(*r);
    ASSERT_TRUE(json.ok()) << json.status();
    auto m = runtime::ParseManifest(*json);
    ASSERT_TRUE(m.ok()) << m.status() << "\n" << *json;
    const Graph& g = p->graph;
    ASSERT_EQ(m->inputs.size(), g.inputs.size());
    ASSERT_EQ(m->outputs.size(), g.outputs.size());
    std::vector<runtime::RunArg> args;
    int fp8_input = -1;
    for (size_t i = 0; i < g.inputs.size(); ++i) {
      ExpectDtype(g, g.inputs[i], m->inputs[i], absl::StrCat("input ", i));
      if (IsFp8(m->inputs[i].dtype)) fp8_input = static_cast<int>(i);
      fp8_tensors += IsFp8(m->inputs[i].dtype);
      args.push_back(
          m->inputs[i].scalar
              ? runtime::RunArg::Scalar(1.0)
              : runtime::RunArg::Tensor({0x1000, m->inputs[i].dtype, p->input_shapes[i], {}}));
    }
    auto shapes = runtime::CheckRunArgs(*m, args);
    ASSERT_TRUE(shapes.ok()) << shapes.status();
    auto plan = runtime::PlanLaunch(*m, *shapes);
    ASSERT_TRUE(plan.ok()) << plan.status();
    std::vector<runtime::TensorArg> outs;
    for (size_t i = 0; i < g.outputs.size(); ++i) {
      ExpectDtype(g, g.outputs[i], m->outputs[i], absl::StrCat("output ", i));
      fp8_tensors += IsFp8(m->outputs[i].dtype);
      outs.push_back({0x2000, m->outputs[i].dtype, plan->output_shapes[i], {}});
    }
    EXPECT_TRUE(runtime::CheckOutputArgs(*m, *plan, outs).ok());
    // The other fp8 format is refused, for an fp8 input and an fp8 output.
    const auto other = [](ElementType t) {
      return t == ElementType::kFloat8E4M3 ? ElementType::kFloat8E5M2 : ElementType::kFloat8E4M3;
    };
    if (fp8_input >= 0) {
      args[fp8_input].tensor.dtype = other(args[fp8_input].tensor.dtype);
      EXPECT_EQ(runtime::CheckRunArgs(*m, args).status().code(),
                absl::StatusCode::kInvalidArgument);
    }
    for (runtime::TensorArg& o : outs) {
      if (!IsFp8(o.dtype)) continue;
      o.dtype = other(o.dtype);
      EXPECT_EQ(runtime::CheckOutputArgs(*m, *plan, outs).code(),
                absl::StatusCode::kInvalidArgument);
      o.dtype = other(o.dtype);
    }
  }
  EXPECT_GE(fp8_tensors, 5);  // the files still have fp8 inputs and outputs
}

// The GPU check makes its inputs with RandomInputs (tests/ops/gpu_check_main.cc):
// an fp8 input's values must be fp8 values for gpu_run to encode them.
TEST(Fp8Manifest, RandomInputsOfFp8AreFp8Values) {
  auto p = ParseReproFile(Source("tests/ops/fusions/fp8_scale_2048x8192.py"));
  ASSERT_TRUE(p.ok()) << p.status();
  const std::vector<HostTensor> in = RandomInputs(p->graph, {{16, 64}, {16, 64}}, 20261205);
  ASSERT_EQ(in.size(), 2u);
  ASSERT_EQ(in[1].dtype, DataType::kFloat8E5M2);
  int nonzero = 0;
  for (double v : in[1].data) {
    ASSERT_TRUE(Float8Bits(v, ElementType::kFloat8E5M2).ok()) << v;
    nonzero += v != 0;
  }
  EXPECT_GT(nonzero, 512);
}

bool SameValue(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof a) == 0;
}

TEST(Fp8Manifest, RuntimeValuesAreTheReferencesValues) {
  for (ElementType t : {ElementType::kFloat8E4M3, ElementType::kFloat8E5M2}) {
    const DataType dt =
        t == ElementType::kFloat8E4M3 ? DataType::kFloat8E4M3 : DataType::kFloat8E5M2;
    int finite = 0;
    for (int b = 0; b < 256; ++b) {
      const double v = runtime::Float8Value(static_cast<uint8_t>(b), t);
      EXPECT_TRUE(SameValue(RoundTo(dt, v), v)) << runtime::ElementTypeName(t) << " code " << b;
      if (std::isnan(v)) continue;
      finite += std::isfinite(v);
      auto back = Float8Bits(v, t);
      ASSERT_TRUE(back.ok()) << back.status();
      EXPECT_EQ(*back, b) << runtime::ElementTypeName(t) << " " << v;
    }
    // e4m3fn: 2 NaN codes, no infinities; e5m2: 6 NaN codes and two infinities.
    EXPECT_EQ(finite, t == ElementType::kFloat8E4M3 ? 254 : 248);
    // The reference's largest finite values and its rounding past them.
    const double max = t == ElementType::kFloat8E4M3 ? 448 : 57344;
    EXPECT_EQ(Float8Bits(max, t).value(), t == ElementType::kFloat8E4M3 ? 0x7e : 0x7b);
    EXPECT_FALSE(Float8Bits(max * 0.99, t).ok());  // not a value of the format
    auto big = Float8Bits(RoundTo(dt, 1e9), t);
    ASSERT_TRUE(big.ok()) << big.status();
    if (t == ElementType::kFloat8E4M3) {
      EXPECT_TRUE(std::isnan(runtime::Float8Value(*big, t)));  // no infinities: NaN
    } else {
      EXPECT_EQ(*big, 0x7c);  // infinity
    }
  }
}

}  // namespace
}  // namespace fusiond
