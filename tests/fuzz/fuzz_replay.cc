// Runs a libFuzzer target over files and folders without libFuzzer (gcc
// builds, CTest): every file is one input, named on stderr before it runs.
// Exits non-zero when a path cannot be read; a bug in the target aborts.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    std::error_code ec;
    if (fs::is_directory(argv[i], ec)) {
      for (const auto& e : fs::recursive_directory_iterator(argv[i]))
        if (e.is_regular_file()) files.push_back(e.path());
    } else if (fs::is_regular_file(argv[i], ec)) {
      files.push_back(argv[i]);
    } else {
      std::fprintf(stderr, "fuzz_replay: %s: no such file or folder\n", argv[i]);
      return 2;
    }
  }
  for (const fs::path& f : files) {
    // Named first, so the last name before a failure is the input that failed.
    std::fprintf(stderr, "fuzz_replay: %s\n", f.c_str());
    std::ifstream in(f, std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    const std::string s = bytes.str();
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(s.data()), s.size());
  }
  std::printf("fuzz_replay: %zu inputs, no failure\n", files.size());
  return files.empty() ? 2 : 0;
}
