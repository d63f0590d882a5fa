// Scratch files and directories for the tool's tests.
#pragma once

#include "support/scratch_dir.hpp"

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

namespace cli_test {

// An open, unlinked-on-destruction temporary file.
class scratch_file {
 public:
  explicit scratch_file(const std::string& tag) {
    std::string pattern = (std::filesystem::temp_directory_path() / ("numart-cli-" + tag + "-XXXXXX")).string();
    fd_ = ::mkstemp(pattern.data());
    if (fd_ < 0) throw std::runtime_error("mkstemp failed");
    path_ = pattern;
  }
  scratch_file(const scratch_file&) = delete;
  scratch_file& operator=(const scratch_file&) = delete;
  ~scratch_file() {
    ::close(fd_);
    ::unlink(path_.c_str());
  }
  int fd() const { return fd_; }
  std::string contents() const { return read_file(path_); }

  static std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::string text;
    char chunk[4096];
    while (in.read(chunk, sizeof chunk) || in.gcount() > 0) text.append(chunk, static_cast<std::size_t>(in.gcount()));
    return text;
  }

 private:
  int fd_ = -1;
  std::string path_;
};

using numart_test::scratch_dir;

inline std::string topology_file(const std::string& name) { return std::string(NUMART_TOPOLOGY_DIR) + "/" + name; }

}  // namespace cli_test
