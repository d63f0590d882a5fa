// docs/design/tunables.md carries the tables of rows, generated from tunables.def and
// features.def. This test regenerates them and fails when the page is stale, so adding a row
// without documenting it is caught. To refresh the page after changing a .def file:
//   NUMART_UPDATE_DOCS=1 ./numart_tunables_tests --gtest_filter='TunablesDocs.*'
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

namespace {

constexpr std::string_view kBegin = "<!-- BEGIN GENERATED ROWS: tests/unit/tunables/docs_table_test.cpp -->\n";
constexpr std::string_view kEnd = "<!-- END GENERATED ROWS -->\n";

std::string cell(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

std::string generated_rows() {
  std::string s = "| tunable | default | range | unit | origin | meaning |\n|---|---|---|---|---|---|\n";
#define RT_TUNABLE(name, type, def, lo, hi, unit, origin, doc)                                             \
  s += "| `" #name "` | " + std::to_string(type{def}) + " | " + std::to_string(type{lo}) + " .. " +          \
       std::to_string(type{hi}) + " | " + cell(unit) + " | " + cell(origin) + " | " + cell(doc) + " |\n";
#include "tunables/tunables.def"
#undef RT_TUNABLE
  s += "\n| feature | default | origin | meaning |\n|---|---|---|---|\n";
#define RT_FEATURE(NAME, def, origin, doc) \
  s += std::string("| `" #NAME "` | ") + ((def) ? "on" : "off") + " | " + cell(origin) + " | " + cell(doc) + " |\n";
#include "tunables/features.def"
#undef RT_FEATURE
  return s;
}

TEST(TunablesDocs, PageListsEveryRowAsInTheTables) {
  const std::string path = std::string(NUMART_SOURCE_DIR) + "/docs/design/tunables.md";
  std::ifstream in(path);
  ASSERT_TRUE(in) << "cannot read " << path;
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string page = buf.str();
  const std::size_t b = page.find(kBegin);
  const std::size_t e = page.find(kEnd);
  ASSERT_NE(b, std::string::npos) << path << " lacks the line " << kBegin;
  ASSERT_NE(e, std::string::npos) << path << " lacks the line " << kEnd;
  ASSERT_LT(b, e);
  const std::size_t body = b + kBegin.size();
  const std::string fresh = generated_rows();
  if (page.substr(body, e - body) == fresh) return;
  const char* update = std::getenv("NUMART_UPDATE_DOCS");
  if (update != nullptr && std::string_view(update) == "1") {
    std::ofstream out(path, std::ios::trunc);
    out << page.substr(0, body) << fresh << page.substr(e);
    ASSERT_TRUE(out.good()) << "cannot write " << path;
    GTEST_SKIP() << "rewrote the generated rows of " << path;
  }
  FAIL() << path << " is stale; rerun with NUMART_UPDATE_DOCS=1 or paste:\n" << fresh;
}

}  // namespace
