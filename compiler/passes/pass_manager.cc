#include "compiler/passes/pass_manager.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/verifier.h"

namespace fusiond {

bool PassManager::Run(const char* name, PassFn fn, Graph& g) {
  if (!status_.ok()) return false;
  PassLog log;
  auto start = std::chrono::steady_clock::now();
  absl::StatusOr<bool> changed = fn(g, options_, log);
  auto end = std::chrono::steady_clock::now();
  PassRecord record;
  record.name = name;
  record.micros = std::chrono::duration<double, std::micro>(end - start).count();
  if (!changed.ok()) {
    status_ = absl::Status(changed.status().code(),
                           absl::StrCat("pass ", name, ": ", changed.status().message()));
    return false;
  }
  record.changed = *changed;
  record.notes = std::move(log.notes);
  if (record.changed && (options_.dump_pass == "all" || options_.dump_pass == name)) {
    record.dump = PrintGraph(g);
  }
  if (options_.verify) {
    if (absl::Status s = VerifyGraph(g); !s.ok()) {
      status_ = absl::InternalError(
          absl::StrCat("IR is invalid after pass ", name, ": ", s.message(), "\n", PrintGraph(g)));
    }
  }
  records_->push_back(std::move(record));
  return *changed && status_.ok();
}

}  // namespace fusiond
