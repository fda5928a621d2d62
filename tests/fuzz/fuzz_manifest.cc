// libFuzzer target: bytes as a kernel manifest (docs/manifest.md), what the
// C++ runtime reads beside the cubins: ParseManifest, then a launch plan for
// shapes built from the manifest's own static extents (2048 where an extent
// is symbolic). Both return a value or an error with a message; a crash, a
// sanitizer report or a failed check is a finding.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "client/runtime/launch_plan.h"
#include "client/runtime/manifest.h"
#include "tests/fuzz/fuzz_pipeline.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace rt = fusiond::runtime;
  auto manifest = rt::ParseManifest(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!manifest.ok()) {
    fusiond::FuzzCheckError(manifest.status());
    return 0;
  }
  std::vector<rt::Shape> shapes;
  for (const rt::ManifestTensor& in : manifest->inputs) {
    rt::Shape s;
    if (!in.scalar) {
      for (const rt::Expr& e : in.shape) {
        auto v = e.Eval({});
        s.push_back(v.ok() ? *v : 2048);
      }
    }
    shapes.push_back(s);
  }
  auto plan = rt::PlanLaunch(*manifest, shapes);
  if (!plan.ok()) fusiond::FuzzCheckError(plan.status());
  rt::RequiredAlignments(*manifest, rt::KernelParam::Kind::kInput);
  rt::RequiredAlignments(*manifest, rt::KernelParam::Kind::kOutput);
  return 0;
}
