// The corpus replay of a fuzz harness outside libFuzzer (any compiler): every regular file of the
// directories (or the files) named on the command line goes through LLVMFuzzerTestOneInput once,
// in name order. A broken property aborts (fuzz_support.cpp). Exit status 0 when every input
// passed, 2 on a bad command line or an unreadable input, or when no input was found at all.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "fuzz_support.hpp"

namespace {

namespace fs = std::filesystem;

bool read_bytes(const fs::path& p, std::vector<std::uint8_t>& out) {
  std::FILE* f = std::fopen(p.c_str(), "rb");
  if (f == nullptr) return false;
  std::uint8_t chunk[4096];
  std::size_t n = 0;
  while ((n = std::fread(chunk, 1, sizeof chunk, f)) > 0) out.insert(out.end(), chunk, chunk + n);
  const bool ok = std::ferror(f) == 0;
  std::fclose(f);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s DIR|FILE...: runs every input through the harness once\n", argv[0]);
    return 2;
  }
  std::size_t replayed = 0;
  for (int a = 1; a < argc; ++a) {
    const fs::path arg(argv[a]);
    std::error_code ec;
    std::vector<fs::path> inputs;
    if (fs::is_directory(arg, ec)) {
      for (const fs::directory_entry& e : fs::directory_iterator(arg, ec)) {
        if (e.is_regular_file(ec)) inputs.push_back(e.path());
      }
      std::sort(inputs.begin(), inputs.end());
    } else if (fs::is_regular_file(arg, ec)) {
      inputs.push_back(arg);
    }
    if (ec || inputs.empty()) {
      std::fprintf(stderr, "%s: '%s' is not a readable file or a directory holding inputs\n", argv[0], argv[a]);
      return 2;
    }
    for (const fs::path& p : inputs) {
      std::vector<std::uint8_t> bytes;
      if (!read_bytes(p, bytes)) {
        std::fprintf(stderr, "%s: cannot read '%s'\n", argv[0], p.c_str());
        return 2;
      }
      const std::string name = p.string();
      numart_fuzz::current_input = name.c_str();
      LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
      ++replayed;
    }
    std::printf("replayed %zu inputs from %s\n", inputs.size(), argv[a]);
  }
  numart_fuzz::current_input = nullptr;
  std::printf("replayed %zu inputs: every property held\n", replayed);
  return 0;
}
