#include "client/runtime/driver_api.h"

#include <dlfcn.h>

#include <string>

#include "absl/strings/str_cat.h"

namespace fusiond {
namespace runtime {
namespace {

#define FUSIOND_STRINGIFY_EXPANDED(x) FUSIOND_STRINGIFY(x)
#define FUSIOND_STRINGIFY(x) #x

struct Loaded {
  DriverApi api;
  absl::Status status;
};

Loaded LoadDriver() {
  Loaded out;
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* err = dlerror();
    out.status = absl::UnavailableError(
        absl::StrCat("CUDA driver not found (dlopen libcuda.so.1: ", err ? err : "?", ")"));
    return out;
  }
#define FUSIOND_RESOLVE(fn)                                                                        \
  out.api.fn = reinterpret_cast<decltype(out.api.fn)>(dlsym(lib, FUSIOND_STRINGIFY_EXPANDED(fn))); \
  if (out.api.fn == nullptr) {                                                                     \
    out.status = absl::UnavailableError(                                                           \
        absl::StrCat("CUDA driver lacks ", FUSIOND_STRINGIFY_EXPANDED(fn), " (driver too old?)")); \
    return out;                                                                                    \
  }
  FUSIOND_DRIVER_FUNCTIONS(FUSIOND_RESOLVE)
#undef FUSIOND_RESOLVE
  return out;
}

}  // namespace

absl::StatusOr<const DriverApi*> Driver() {
  static const Loaded* loaded = new Loaded(LoadDriver());
  if (!loaded->status.ok()) return loaded->status;
  return &loaded->api;
}

const DriverApi& Cu() { return **Driver(); }

}  // namespace runtime
}  // namespace fusiond
