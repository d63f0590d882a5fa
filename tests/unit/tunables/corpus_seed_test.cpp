// tests/fuzz/corpus/tunables/every_row seeds the RT_TUNE fuzzer with every row of the tables
// set away from its default: each tunable at its maximum, each feature flipped. This test
// regenerates it from tunables.def and features.def and fails when the seed is stale, so a new
// row reaches the fuzzer's corpus. To refresh the seed after changing a .def file:
//   NUMART_UPDATE_DOCS=1 ./numart_tunables_tests --gtest_filter='TunablesCorpus.*'
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include "tunables/tunables.hpp"

namespace {

rt::tun::settings every_row_changed() {
  rt::tun::settings s;
#define RT_TUNABLE(name, type, def, lo, hi, unit, origin, doc) s.t.name = type{hi};
#include "tunables/tunables.def"
#undef RT_TUNABLE
#define RT_FEATURE(NAME, def, origin, doc) s.f.NAME = !(def);
#include "tunables/features.def"
#undef RT_FEATURE
  return s;
}

TEST(TunablesCorpus, EveryRowSeedSetsEveryRowAwayFromItsDefault) {
  const rt::tun::settings want = every_row_changed();
  const std::string fresh = rt::tun::encode(want);
  ASSERT_EQ(rt::tun::parse(fresh), want);
  const std::string path = std::string(NUMART_SOURCE_DIR) + "/tests/fuzz/corpus/tunables/every_row";
  std::ifstream in(path);
  ASSERT_TRUE(in) << "cannot read " << path;
  std::stringstream buf;
  buf << in.rdbuf();
  if (buf.str() == fresh) return;
  const char* update = std::getenv("NUMART_UPDATE_DOCS");
  if (update != nullptr && std::string_view(update) == "1") {
    std::ofstream out(path, std::ios::trunc | std::ios::binary);
    out << fresh;
    ASSERT_TRUE(out.good()) << "cannot write " << path;
    GTEST_SKIP() << "rewrote " << path;
  }
  FAIL() << path << " is stale; rerun with NUMART_UPDATE_DOCS=1 or write (no newline):\n" << fresh;
}

}  // namespace
