#include "tests/runtime_e2e/manifest_without_binaries.h"

#include "absl/strings/str_cat.h"
#include "compiler/codegen/codegen.h"
#include "compiler/codegen/manifest.h"

namespace fusiond {

absl::StatusOr<std::string> ManifestWithoutBinaries(CompileResult& r) {
  for (size_t i = 0; i < r.segments.size(); ++i) {
    SegmentResult& seg = r.segments[i];
    CodegenOptions o;
    o.kernel_name = absl::StrCat("k", i);
    o.symbol_sizes = seg.symbol_sizes;
    auto k = GenerateKernel(seg.graph, seg.params, o);
    if (!k.ok()) return k.status();
    KernelArtifact a;
    a.kernel_name = k->name;
    a.arch = "sm_90";
    a.manifest_json = KernelManifestJson(*k, k->name + ".cubin", 64, 0, DefaultTarget());
    seg.kernel = a;
  }
  return FusionManifestJson(r, "case");
}

}  // namespace fusiond
