// 0-dim CPU tensors (define_tensor(shape=[], is_cpu=True)): scalar inputs
// the runtime reads at launch; larger CPU tensors refused naming the input.
#include <gtest/gtest.h>

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "compiler/frontend/frontend.h"
#include "compiler/ir/ir_proto.h"
#include "compiler/ir/verifier.h"

namespace fusiond {
namespace {

constexpr char kHeader[] =
    "import torch\n"
    "from nvfuser import FusionDefinition, DataType\n"
    "\n"
    "def fusion(fd: FusionDefinition) -> None:\n"
    "    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, "
    "is_cpu=False, stride_order=[1, 0])\n";

constexpr char kFooter[] =
    "\nwith FusionDefinition() as fd:\n"
    "    fusion(fd)\n";

// T0 times 0.9 ** T1, T1 a CPU tensor of the given declaration.
std::string Script(const std::string& step_decl, const std::string& inputs) {
  return absl::StrCat(kHeader, "    T1 = fd.define_tensor(", step_decl, ")\n",
                      "    S2 = fd.define_scalar(0.900000, dtype=DataType.Double)\n"
                      "    T3 = fd.ops.pow(S2, T1)\n"
                      "    T4 = fd.ops.mul(T0, T3)\n"
                      "    fd.add_output(T4)\n",
                      kFooter, inputs);
}

constexpr char kStep[] =
    "shape=[], contiguity=[], dtype=DataType.Float, is_cpu=True, stride_order=[]";

std::string ErrorOf(const std::string& text) {
  auto r = ParseReproScript(text, "t.py");
  EXPECT_FALSE(r.ok());
  if (r.ok()) return "";
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
  return std::string(r.status().message());
}

TEST(CpuScalar, ZeroDimCpuTensorIsAScalarInput) {
  for (const char* list : {"torch.tensor(3.0, dtype=torch.float32)",
                           "torch.randn((), dtype=torch.float32, device='cpu')"}) {
    auto p = ParseReproScript(
        Script(kStep, absl::StrCat("inputs = [\n    torch.randn((8, 16), dtype=torch.float32, "
                                   "device='cuda:0'),\n    ",
                                   list, ",\n]\nfd.execute(inputs)\n")),
        "t.py");
    ASSERT_TRUE(p.ok()) << list << ": " << p.status();
    ASSERT_TRUE(VerifyGraph(p->graph).ok());
    const Value& step = p->graph.value(p->graph.inputs[1]);
    EXPECT_FALSE(step.is_tensor);
    EXPECT_TRUE(step.cpu_tensor);
    EXPECT_EQ(step.dtype, DataType::kFloat);
    EXPECT_FALSE(p->graph.value(p->graph.inputs[0]).cpu_tensor);
    EXPECT_EQ(p->input_shapes, (std::vector<std::vector<int64_t>>{{8, 16}, {}}));
    ASSERT_EQ(p->inputs.size(), 2u);
    EXPECT_TRUE(p->inputs[1].shape.empty());
  }
  auto p = ParseReproScript(
      Script(kStep, "inputs = [torch.randn((2, 3)), torch.tensor(3.0, dtype=torch.float32)]\n"),
      "t.py");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->inputs[1].generator, "full");
  EXPECT_DOUBLE_EQ(p->inputs[1].value, 3.0);
}

TEST(CpuScalar, DtypesOfTheTensor) {
  const std::pair<const char*, DataType> cases[] = {{"Float", DataType::kFloat},
                                                    {"Double", DataType::kDouble},
                                                    {"Int", DataType::kInt64},
                                                    {"Bool", DataType::kBool}};
  for (const auto& [name, dtype] : cases) {
    auto p = ParseReproScript(
        Script(absl::StrCat("shape=[], contiguity=[], dtype=DataType.", name, ", is_cpu=True"), ""),
        "t.py");
    ASSERT_TRUE(p.ok()) << name << ": " << p.status();
    const Value& step = p->graph.value(p->graph.inputs[1]);
    EXPECT_EQ(step.dtype, dtype) << name;
    EXPECT_TRUE(step.cpu_tensor) << name;
  }
  // torch.tensor's own dtypes: an int literal is int64, a float one float32.
  auto p = ParseReproScript(Script("shape=[], dtype=DataType.Int, is_cpu=True",
                                   "inputs = [torch.randn(2, 3), "
                                   "torch.tensor(7)]\n"),
                            "t.py");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->inputs[1].dtype, DataType::kInt64);
}

TEST(CpuScalar, CpuTensorsOfHigherRankAreRefusedNamingTheInput) {
  const std::string e =
      ErrorOf(Script("shape=[-1], contiguity=[True], dtype=DataType.Float, is_cpu=True", ""));
  EXPECT_TRUE(absl::StrContains(e, "input 1 is a CPU tensor (is_cpu=True) of rank 1")) << e;
  EXPECT_TRUE(absl::StrContains(e, "only 0-dim CPU tensors")) << e;
  EXPECT_TRUE(absl::StrContains(e, "t.py:")) << e;
  // is_cpu=False at rank 0 stays a (GPU) tensor.
  auto p = ParseReproScript(Script("shape=[], dtype=DataType.Float, is_cpu=False", ""), "t.py");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(p->graph.value(p->graph.inputs[1]).is_tensor);
  EXPECT_FALSE(p->graph.value(p->graph.inputs[1]).cpu_tensor);
}

TEST(CpuScalar, InputsListMustGiveAZeroDimTensorOfTheDtype) {
  const std::string head = "inputs = [torch.randn((2, 3), dtype=torch.float32), ";
  for (const char* bad : {"3.0", "torch.tensor(3, dtype=torch.int64)", "torch.randn((1,))",
                          "torch.tensor(3.0, dtype=torch.float64)"}) {
    const std::string e = ErrorOf(Script(kStep, absl::StrCat(head, bad, "]\n")));
    EXPECT_TRUE(absl::StrContains(e, "input 1 (T1) is a 0-dim CPU tensor of type float32")) << e;
    EXPECT_TRUE(absl::StrContains(e, "torch.tensor(x, dtype=torch.float32)")) << e;
  }
  const std::string e = ErrorOf(Script(kStep, head + "torch.tensor([1.0, 2.0])]\n"));
  EXPECT_TRUE(absl::StrContains(e, "torch.tensor of something other than a number")) << e;
}

TEST(CpuScalar, WireFormKeepsTheFlag) {
  auto p = ParseReproScript(Script(kStep, ""), "t.py");
  ASSERT_TRUE(p.ok()) << p.status();
  auto back = FromProto(ToProto(p->graph));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(back->value(back->inputs[1]).cpu_tensor);
  EXPECT_FALSE(back->value(back->inputs[0]).cpu_tensor);
  // Only a scalar input may carry it.
  fusiond::v1::FusionGraph bad = ToProto(p->graph);
  bad.mutable_inputs(0)->set_cpu_tensor(true);
  auto refused = FromProto(bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(absl::StrContains(refused.status().message(),
                                "input 0 (T0) is a tensor with "
                                "cpu_tensor set"))
      << refused.status();
}

TEST(CpuScalar, VerifierRefusesTheFlagOffScalarInputs) {
  auto p = ParseReproScript(Script(kStep, ""), "t.py");
  ASSERT_TRUE(p.ok()) << p.status();
  Graph g = p->graph;
  g.value(g.inputs[0]).cpu_tensor = true;
  const absl::Status s = VerifyGraph(g);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "is marked a CPU tensor but is not a scalar input"))
      << s;
}

}  // namespace
}  // namespace fusiond
