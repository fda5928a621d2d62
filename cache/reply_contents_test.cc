#include "cache/reply_contents.h"

#include "gtest/gtest.h"

namespace fusiond {
namespace {

fusiond::v1::CompiledFusion Record() {
  fusiond::v1::CompiledFusion c;
  c.set_canonical_hash("ab12");
  c.set_report_json("{\"segments\":[]}");
  c.set_manifest_json("{\"kernels\":[]}");
  c.add_passes()->set_name("cse");
  (*c.mutable_stage_micros())["nvrtc"] = 5;
  fusiond::v1::Segment* s = c.add_segments();
  s->set_graph("segment graph bytes");
  s->set_scheduler_reason("why");
  s->set_boundary_reason("cut");
  s->mutable_params()->set_kind("pointwise");
  fusiond::v1::Kernel* k = s->mutable_kernel();
  k->set_kernel_name("fz_k0");
  k->set_cuda_source("__global__ void fz_k0() {}");
  k->set_binary(
      "\x7f"
      "ELF");
  k->set_arch("sm_90");
  k->set_manifest_json("{\"name\":\"fz_k0\"}");
  k->set_registers(32);
  return c;
}

TEST(ReplyContentsTest, LeanReplyKeepsWhatALaunchNeeds) {
  fusiond::v1::CompiledFusion c = Record();
  TrimCompiledFusion(ReplyContents{}, &c);
  EXPECT_EQ(c.canonical_hash(), "ab12");
  EXPECT_EQ(c.manifest_json(), "{\"kernels\":[]}");
  EXPECT_EQ(c.stage_micros().at("nvrtc"), 5);
  EXPECT_TRUE(c.report_json().empty());
  EXPECT_EQ(c.passes_size(), 0);
  const fusiond::v1::Segment& s = c.segments(0);
  EXPECT_TRUE(s.graph().empty());
  EXPECT_TRUE(s.scheduler_reason().empty());
  EXPECT_TRUE(s.boundary_reason().empty());
  EXPECT_EQ(s.params().kind(), "pointwise");
  EXPECT_TRUE(s.kernel().cuda_source().empty());
  EXPECT_EQ(s.kernel().binary(),
            "\x7f"
            "ELF");
  EXPECT_EQ(s.kernel().kernel_name(), "fz_k0");
  EXPECT_EQ(s.kernel().arch(), "sm_90");
  EXPECT_EQ(s.kernel().manifest_json(), "{\"name\":\"fz_k0\"}");
  EXPECT_EQ(s.kernel().registers(), 32);
}

TEST(ReplyContentsTest, SourceAndReportEachOnRequest) {
  fusiond::v1::CompiledFusion source_only = Record();
  TrimCompiledFusion(ReplyContents{true, false}, &source_only);
  EXPECT_EQ(source_only.segments(0).kernel().cuda_source(), "__global__ void fz_k0() {}");
  EXPECT_TRUE(source_only.report_json().empty());
  fusiond::v1::CompiledFusion report_only = Record();
  TrimCompiledFusion(ReplyContents{false, true}, &report_only);
  EXPECT_TRUE(report_only.segments(0).kernel().cuda_source().empty());
  EXPECT_EQ(report_only.report_json(), "{\"segments\":[]}");
  EXPECT_EQ(report_only.passes_size(), 1);
  EXPECT_EQ(report_only.segments(0).graph(), "segment graph bytes");
  fusiond::v1::CompiledFusion everything = Record();
  TrimCompiledFusion(ReplyContents::Everything(), &everything);
  EXPECT_EQ(everything.SerializeAsString(), Record().SerializeAsString());
}

TEST(ReplyContentsTest, TrimPayloadMatchesTheMessageForm) {
  auto payload = std::make_shared<const std::string>(Record().SerializeAsString());
  auto same = TrimPayload(payload, ReplyContents::Everything());
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same->get(), payload.get());  // not copied
  auto lean = TrimPayload(payload, ReplyContents{});
  ASSERT_TRUE(lean.ok());
  fusiond::v1::CompiledFusion parsed, want = Record();
  ASSERT_TRUE(parsed.ParseFromString(**lean));
  TrimCompiledFusion(ReplyContents{}, &want);
  EXPECT_EQ(parsed.DebugString(), want.DebugString());
  EXPECT_LT((*lean)->size(), payload->size());
  auto garbage = TrimPayload(std::make_shared<const std::string>("\xff\xff\xff"), ReplyContents{});
  EXPECT_EQ(garbage.status().code(), absl::StatusCode::kInternal);
}

}  // namespace
}  // namespace fusiond
