#include "cache/kernel_text_store.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cache/cache_key.h"
#include "compiler/util/hash.h"

namespace fusiond {

std::string KernelTextStore::IndexKey(const std::string& source, const std::string& kernel_name,
                                      const std::string& arch) {
  // The compiler version holds NVRTC's flags: a cubin compiled with others
  // is not this input's.
  const std::string input = absl::StrCat(CompilerVersionString(), "\n", NvrtcVersionString(), "\n",
                                         arch, "\n", kernel_name, "\n", source);
  // 128 bits from two seeds; Find() compares the text itself anyway.
  return absl::StrFormat("t1|%016x%016x", Fnv1a64(input), Fnv1a64(input, 0x84222325cbf29ce4ull));
}

void KernelTextStore::Index(const std::string& cache_key, const fusiond::v1::CompiledFusion& record,
                            const std::string& arch) {
  for (int i = 0; i < record.segments_size(); ++i) {
    const fusiond::v1::Kernel& k = record.segments(i).kernel();
    if (!record.segments(i).has_kernel() || k.binary().empty()) continue;
    const std::string& a = !arch.empty() ? arch : k.is_ptx() ? std::string() : k.arch();
    if (a.empty()) continue;
    // Best effort: an index entry lost is a compile later, nothing worse.
    (void)cache_->InsertRequest(IndexKey(k.cuda_source(), k.kernel_name(), a),
                                absl::StrCat(i, "|", cache_key));
  }
}

std::optional<NvrtcOutput> KernelTextStore::Find(const std::string& source,
                                                 const std::string& kernel_name,
                                                 const NvrtcOptions& options) {
  if (!options.extra.empty()) return std::nullopt;  // the pipeline's options only
  absl::StatusOr<std::string> where =
      cache_->LookupRequest(IndexKey(source, kernel_name, options.arch));
  if (!where.ok()) return std::nullopt;
  const size_t bar = where->find('|');
  int segment = -1;
  if (bar == std::string::npos || !absl::SimpleAtoi(where->substr(0, bar), &segment) ||
      segment < 0) {
    return std::nullopt;
  }
  absl::StatusOr<fusiond::v1::CompiledFusion> record = cache_->Lookup(where->substr(bar + 1));
  if (!record.ok() || segment >= record->segments_size()) return std::nullopt;
  const fusiond::v1::Kernel& k = record->segments(segment).kernel();
  if (k.cuda_source() != source || k.kernel_name() != kernel_name || k.binary().empty())
    return std::nullopt;
  NvrtcOutput out;
  out.binary = k.binary();
  out.is_ptx = k.is_ptx();
  out.arch = k.arch();
  out.options.assign(k.compile_options().begin(), k.compile_options().end());
  out.registers = k.registers();
  out.spill_bytes = k.spill_bytes();
  out.static_smem_bytes = k.static_smem_bytes();
  return out;
}

}  // namespace fusiond
