// The launch manifest (docs/manifest.md): one `kernels[]` entry per compiled
// segment, and the fusion-level document that the runtimes read.
#ifndef FUSIOND_COMPILER_CODEGEN_MANIFEST_H_
#define FUSIOND_COMPILER_CODEGEN_MANIFEST_H_

#include <string>
#include <utility>
#include <vector>

#include "compiler/codegen/codegen.h"
#include "compiler/compile_result.h"

namespace fusiond {

// One kernels[] entry. `binary_file` is the file name of the cubin/PTX;
// registers / static_smem_bytes come from ptxas (registers < 0: unknown) and
// bound cooperative grids. A cooperative kernel also carries
// "workspace": {"bytes": "256", "zero": true} (barrier words) and
// "workspace2": {"bytes": ..., "zero": false} (partial results), which
// FusionManifestJson lifts into the fusion's workspaces[] (its params name
// workspace indices 0 and 1).
std::string KernelManifestJson(const GeneratedKernel& k, const std::string& binary_file,
                               int registers, int static_smem_bytes, const Target& target);

// The fusion-level manifest: symbols and inputs/outputs of the optimized
// graph, workspaces, and every segment's kernel entry in order. A segment's
// inputs and outputs are bound through SegmentResult::source_inputs/outputs:
// fusion inputs, fusion outputs, or intermediates (values one segment writes
// and a later one reads).
std::string FusionManifestJson(const CompileResult& result, const std::string& fusion_name);

// Writes DIR/manifest.json and one binary per kernel (DIR/<kernel>.cubin or
// .ptx), plus DIR/<kernel>.cu with the source (DIR is created); the
// `fusionc compile --out` layout of docs/manifest.md. Unavailable when a kernel has no binary (no
// NVRTC in this build); InvalidArgument when DIR cannot be written.
// Creates `dir` and writes each (file name, bytes) pair into it.
absl::Status WriteFilesInto(const std::string& dir,
                            const std::vector<std::pair<std::string, std::string>>& files);

absl::Status WriteArtifacts(const CompileResult& result, const std::string& dir,
                            const std::string& fusion_name);

// Every kernel's source, each preceded by a "// kernel <name>" line: what
// `fusionc compile --emit-cuda` prints.
std::string EmittedCuda(const CompileResult& result);

// JSON string literal with escapes.
std::string JsonQuote(const std::string& s);

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_CODEGEN_MANIFEST_H_
