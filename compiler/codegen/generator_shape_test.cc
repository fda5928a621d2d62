// The generator's first lowering steps alone: the launch shape it derives
// from the heuristics (Generator::RunToLaunchShape).
#include <gtest/gtest.h>

#include "compiler/codegen/codegen_test_graphs.h"
#include "compiler/codegen/generator.h"

namespace fusiond {
namespace {

using namespace codegen_test;  // NOLINT: the shared test graphs

absl::StatusOr<codegen_internal::LaunchShape> ShapeOf(const Graph& g, const HeuristicParams& hp) {
  auto plan = codegen_internal::PlanKernelFor(g, hp);
  if (!plan.ok()) return plan.status();
  CodegenOptions o;
  codegen_internal::Generator gen(*plan, hp, o);
  return gen.RunToLaunchShape();
}

TEST(LaunchShape, InnerPersistentRowsInRegisters) {
  auto s = ShapeOf(Softmax(), SoftmaxParams(256, 8, 132));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->vector_width, 8);  // bf16: 16 bytes
  EXPECT_EQ(s->threads_x, 256);
  EXPECT_EQ(s->threads_y, 1);
  EXPECT_EQ(s->chunks_per_thread, 8);
  EXPECT_EQ(s->row_blocks, 132);
  EXPECT_EQ(s->blocks_per_row, 1);
  EXPECT_TRUE(s->persistent);
  EXPECT_FALSE(s->row_split || s->lanes || s->pointwise);
}

TEST(LaunchShape, VectorsNarrowToSixteenBytesOfTheWidestElement) {
  HeuristicParams hp = InnerOuterParams(4);
  hp.vectorize = 8;  // float tensors: four a vector
  auto s = ShapeOf(ScaleAndColumnSum(), hp);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->vector_width, 4);
}

TEST(LaunchShape, OuterPersistentThreadsRunAlongTheChannel) {
  // block_x * block_y threads along a channel, rounded to warps; grid_x
  // blocks share a channel, grid_y cover the channels.
  HeuristicParams hp = ChannelParams();
  hp.block_x = 40;
  auto s = ShapeOf(ChannelCentering(), Decided(ChannelCentering(), hp));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->threads_x, 64);
  EXPECT_EQ(s->threads_y, 1);
  EXPECT_EQ(s->blocks_per_row, 2);
  EXPECT_EQ(s->row_blocks, 4);
  EXPECT_TRUE(s->row_split);
}

TEST(LaunchShape, BadParametersAreInvalidArgument) {
  HeuristicParams hp = SoftmaxParams();
  hp.vectorize = 3;
  auto s = ShapeOf(Softmax(), hp);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace fusiond
