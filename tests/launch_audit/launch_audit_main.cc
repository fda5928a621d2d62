// fusiond_launch_audit: the launch audit (launch_audit.h) from the command
// line, no GPU. Prints one line a kernel ("CLIFF" or "ok") and exits 1 when
// any kernel is a cliff.
//
//   fusiond_launch_audit [--nvrtc] [--general] [--small] [--arch sm_90] [--all]
//                        [--random FIRST:COUNT] [--shapes S] FILE_OR_DIR...
//
// --shapes '2048x8192;8192' compiles and launches every FILE at those input
// sizes only; --small also launches an artifact of each symbolic definition
// compiled at small sizes (64x256 and the like) at the realistic ones; --all
// prints every kernel, not only cliffs and refusals.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "compiler/frontend/frontend.h"
#include "tests/launch_audit/sweep.h"

namespace {

using fusiond::launch_audit::FusionAudit;

bool ParseShapesFlag(const std::string& text, fusiond::launch_audit::Shapes* out) {
  for (absl::string_view entry : absl::StrSplit(text, ';')) {
    std::vector<int64_t> shape;
    if (entry != "scalar") {
      for (absl::string_view d : absl::StrSplit(entry, 'x')) {
        int64_t v = 0;
        if (!absl::SimpleAtoi(d, &v) || v < 0) return false;
        shape.push_back(v);
      }
    }
    out->push_back(shape);
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  fusiond::launch_audit::SweepOptions options;
  options.targets = fusiond::launch_audit::DefaultTargets();
  bool all = false;
  int64_t random_first = 0, random_count = 0;
  fusiond::launch_audit::Shapes shapes;
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--nvrtc") {
      options.audit.nvrtc = true;
    } else if (a == "--general") {
      options.audit.general = true;
    } else if (a == "--small") {
      options.reuse_small = true;
    } else if (a == "--all") {
      all = true;
    } else if (a == "--arch" && i + 1 < argc) {
      options.audit.arch = argv[++i];
    } else if (a == "--shapes" && i + 1 < argc) {
      if (!ParseShapesFlag(argv[++i], &shapes)) {
        std::fprintf(stderr, "fusiond_launch_audit: --shapes '%s': expected e.g. 2048x8192;8192\n",
                     argv[i]);
        return 2;
      }
    } else if (a == "--random" && i + 1 < argc) {
      std::vector<std::string> p = absl::StrSplit(argv[++i], ':');
      if (p.size() != 2 || !absl::SimpleAtoi(p[0], &random_first) ||
          !absl::SimpleAtoi(p[1], &random_count)) {
        std::fprintf(stderr, "fusiond_launch_audit: --random '%s': expected FIRST:COUNT\n",
                     argv[i]);
        return 2;
      }
    } else if (a == "--help" || a == "-h") {
      std::printf(
          "usage: fusiond_launch_audit [--nvrtc] [--general] [--small] [--arch sm_90] [--all]\n"
          "                            [--random FIRST:COUNT] [--shapes S] FILE_OR_DIR...\n"
          "--random FIRST:COUNT audits tests/random's graphs of those seeds at their sizes\n"
          "(--random 1396:1 is seed 1396); --all prints every kernel, not only cliffs and\n"
          "launches not planned. Exits 1 on a cliff.\n");
      return 0;
    } else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "fusiond_launch_audit: unknown flag %s\n", a.c_str());
      return 2;
    } else {
      paths.push_back(a);
    }
  }
  std::vector<FusionAudit> audits;
  for (const std::string& p : paths) {
    std::vector<std::string> files = std::filesystem::is_directory(p)
                                         ? fusiond::launch_audit::FusionFiles(p)
                                         : std::vector<std::string>{p};
    for (const std::string& f : files) {
      if (shapes.empty()) {
        for (FusionAudit& a : fusiond::launch_audit::AuditFile(f, options))
          audits.push_back(std::move(a));
        continue;
      }
      auto parsed = fusiond::ParseReproFile(f);
      if (!parsed.ok()) {
        std::fprintf(stderr, "fusiond_launch_audit: %s\n", parsed.status().ToString().c_str());
        return 2;
      }
      audits.push_back(fusiond::launch_audit::AuditFusion(
          std::filesystem::path(f).stem().string(), parsed->graph, shapes, shapes, options.audit));
    }
  }
  for (int64_t s = random_first; s < random_first + random_count; ++s)
    audits.push_back(fusiond::launch_audit::AuditRandomCase(s, options.audit));
  int cliffs = 0, kernels = 0, refused = 0;
  for (const FusionAudit& a : audits) {
    kernels += static_cast<int>(a.kernels.size());
    refused += !a.status.ok();
    for (const auto& k : a.kernels) cliffs += k.cliff;
    if (all || a.HasCliff() || !a.status.ok())
      std::fputs(fusiond::launch_audit::FormatAudit(a).c_str(), stdout);
  }
  std::printf("%zu launches, %d kernels, %d cliffs, %d not planned\n", audits.size(), kernels,
              cliffs, refused);
  return cliffs > 0 ? 1 : 0;
}
