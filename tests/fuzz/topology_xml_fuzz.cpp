// Fuzz harness: hwloc XML bytes through topology::load (runtime/topology/topology.cpp, which
// pre-checks them with xml_check.cpp before hwloc 2.9 sees them, I-TOPO-9). The input is written
// to one scratch file, created once per process and removed at exit, and loaded as "xml:FILE".
// For any bytes: the load gives a model that passes check_topology, or a one-line
// topo::topology_error; never a crash, a hang, a leak or another exception.
#include <stdlib.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>

#include "fuzz_support.hpp"
#include "topology/topology.hpp"
#include "topology_checks.hpp"

namespace {

using numart_fuzz::require;

class scratch_file {
 public:
  scratch_file() {
    std::string pattern = (std::filesystem::temp_directory_path() / "numart-fuzz-xml-XXXXXX").string();
    require(::mkdtemp(pattern.data()) != nullptr, "a scratch directory can be created", pattern);
    dir_ = pattern;
    path_ = (dir_ / "input.xml").string();
  }
  scratch_file(const scratch_file&) = delete;
  scratch_file& operator=(const scratch_file&) = delete;
  ~scratch_file() {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  void write(const std::uint8_t* data, std::size_t size) const {
    std::FILE* f = std::fopen(path_.c_str(), "wb");
    require(f != nullptr, "the scratch file can be opened", path_);
    const bool written = size == 0 || std::fwrite(data, 1, size, f) == size;
    require(std::fclose(f) == 0 && written, "the scratch file can be written", path_);
  }
  const std::string& path() const { return path_; }

 private:
  std::filesystem::path dir_;
  std::string path_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  numart_fuzz::prepare_hwloc();
  static const scratch_file file;
  file.write(data, size);
  rt::topo::source src;
  src.what = rt::topo::source::kind::xml;
  src.text = file.path();
  numart_fuzz::load_and_check(src);
  return 0;
}
