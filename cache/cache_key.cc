#include "cache/cache_key.h"

#include <mutex>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "compiler/codegen/version.h"
#include "compiler/nvrtc/nvrtc_compiler.h"
#include "compiler/version/compiler_version.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

namespace fusiond {
namespace {

std::mutex& TestVersionMutex() {
  static auto* mu = new std::mutex;
  return *mu;
}

std::optional<std::string>& TestVersion() {
  static auto* v = new std::optional<std::string>;
  return *v;
}

}  // namespace

std::string CacheKey::Encode() const {
  return absl::StrCat("v", format_version, "|", canonical_hash, "|", bucket, "|", arch, "|",
                      options, "|", nvrtc_version, "|", compiler_version);
}

std::string NvrtcVersionString() {
  static const std::string version = NvrtcVersion();
  return version;
}

std::string CodegenVersionString() { return absl::StrCat("codegen-", kCodegenVersion); }

std::string CompilerVersionString() {
  {
    std::lock_guard<std::mutex> lock(TestVersionMutex());
    if (TestVersion().has_value()) return *TestVersion();
  }
  static const std::string version =
      absl::StrCat("src-", CompilerSourceHash(), ";nvrtc=", absl::StrJoin(NvrtcFlags(), ","));
  return version;
}

ScopedCompilerVersionForTesting::ScopedCompilerVersionForTesting(std::string version) {
  std::lock_guard<std::mutex> lock(TestVersionMutex());
  TestVersion() = std::move(version);
}

ScopedCompilerVersionForTesting::~ScopedCompilerVersionForTesting() {
  std::lock_guard<std::mutex> lock(TestVersionMutex());
  TestVersion().reset();
}

std::string OptionsKeyPart(const CompileOptions& options) {
  return absl::StrCat("api=", options.allow_precision_increase ? 1 : 0,
                      options.general_kernels ? ",general=1" : "");
}

std::string BucketOf(const CompileResult& scheduled, bool with_sizes) {
  std::string out;
  for (const SegmentResult& s : scheduled.segments) {
    if (!out.empty()) out += ",";
    out += absl::StrFormat("%s:%016x", SchedulerName(s.params.kind), s.params.Hash());
    // Only kernels that may be specialized (persistent: not pointwise, not
    // multi-pass).
    const bool persistent = s.params.kind != SchedulerKind::kPointwise && !s.params.multi_pass;
    if (with_sizes && persistent) out += absl::StrCat(":", absl::StrJoin(s.symbol_sizes, "x"));
  }
  return out;
}

CacheKey MakeCacheKey(const CompileResult& scheduled, const CompileOptions& options) {
  CacheKey key;
  key.canonical_hash = scheduled.canonical_hash;
  // Specialized kernels run the sizes compiled for (their manifest's
  // requires), which the heuristics' parameters do not always pin down (an
  // [outer, inner] of 10 is [2, 5] or [10, 1] of a reduction's axes): their
  // entries hold the sizes too.
  key.bucket = BucketOf(scheduled, /*with_sizes=*/!options.general_kernels);
  key.arch = options.arch;
  key.options = OptionsKeyPart(options);
  key.nvrtc_version = NvrtcVersionString();
  return key;
}

std::string RequestKey(const fusiond::v1::FusionGraph& graph,
                       const std::vector<std::vector<int64_t>>& input_shapes,
                       const CompileOptions& options) {
  std::string out =
      absl::StrCat("r", kCacheFormatVersion, "|", NvrtcVersionString(), "|",
                   CompilerVersionString(), "|", options.arch, "|", OptionsKeyPart(options), "|");
  for (const auto& shape : input_shapes) {
    out += "[";
    for (int64_t d : shape) absl::StrAppend(&out, d, ",");
    out += "]";
  }
  out += "|";
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    graph.SerializeToCodedStream(&coded);
  }
  return out;
}

}  // namespace fusiond
