// A private scratch directory for tests that need files on disk (bad XML inputs).
#pragma once

#include "support/scratch_dir.hpp"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

namespace test_files {

// The whole content of a file (empty when it cannot be read).
inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string text;
  char chunk[4096];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) text.append(chunk, static_cast<std::size_t>(in.gcount()));
  return text;
}

using numart_test::scratch_dir;

}  // namespace test_files
