// Structural check of an hwloc XML document (I-TOPO-9): well-formedness, the <topology> root and
// its format version, and the <object> attributes hwloc's importer dereferences without checking.
#include "topology/xml_check.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace rt::topo {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.' || c == ':';
}
bool is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool all_space(std::string_view s) { return std::all_of(s.begin(), s.end(), is_space); }

// hwloc's bitmap text: comma-separated 32-bit words in hex, most significant first, an empty
// word meaning zero, optionally led by "0xf...f" for an infinitely set tail. hwloc writes each
// word as 0x%08lx; this accepts 1 to 8 digits with an optional 0x. Not a leading comma: hwloc
// 2.9 counts the words from the second character, then reads one word more than it counted and
// aborts (assertion in hwloc_bitmap_sscanf, cpuset=",0x00000400"; found by
// tests/fuzz/topology_xml_fuzz.cpp). hwloc never writes one.
bool is_bitmap(std::string_view v) {
  if (v.empty() || v.substr(0, 1) == ",") return false;  // libxml2's importer drops an empty value
  constexpr std::string_view kInfinite = "0xf...f";
  if (v.substr(0, kInfinite.size()) == kInfinite) {
    v.remove_prefix(kInfinite.size());
    if (v.empty()) return true;
    if (v[0] != ',') return false;
    v.remove_prefix(1);
  }
  while (true) {
    const std::size_t comma = v.find(',');
    std::string_view word = v.substr(0, comma);
    if (!word.empty()) {
      if (word.size() > 2 && word[0] == '0' && (word[1] == 'x' || word[1] == 'X')) word.remove_prefix(2);
      if (word.empty() || word.size() > 8 || !std::all_of(word.begin(), word.end(), is_hex)) return false;
    }
    if (comma == std::string_view::npos) return true;
    v.remove_prefix(comma + 1);
  }
}

// A bitmap accepted by is_bitmap() as 32-bit words, least significant first; `infinite` for a
// "0xf...f" tail (every word above them set).
struct bitmap_words {
  std::vector<std::uint32_t> words;
  bool infinite = false;
};

bitmap_words words_of(std::string_view v) {
  bitmap_words b;
  constexpr std::string_view kInfinite = "0xf...f";
  if (v.substr(0, kInfinite.size()) == kInfinite) {
    b.infinite = true;
    v.remove_prefix(kInfinite.size());
    if (!v.empty()) v.remove_prefix(1);
  }
  std::vector<std::uint32_t> msb_first;
  // Every comma separates two words: "0xff,," is three, the last two empty. "0xf...f" alone is
  // the infinite tail and no word.
  while (!v.empty() || !msb_first.empty()) {
    const std::size_t comma = v.find(',');
    std::string_view word = v.substr(0, comma);
    if (word.size() > 2 && word[0] == '0' && (word[1] == 'x' || word[1] == 'X')) word.remove_prefix(2);
    msb_first.push_back(word.empty() ? 0u : static_cast<std::uint32_t>(std::stoul(std::string(word), nullptr, 16)));
    if (comma == std::string_view::npos) break;
    v.remove_prefix(comma + 1);
  }
  b.words.assign(msb_first.rbegin(), msb_first.rend());
  return b;
}

bool intersect(const bitmap_words& a, const bitmap_words& b) {
  const std::size_t n = std::max(a.words.size(), b.words.size());
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t x = i < a.words.size() ? a.words[i] : (a.infinite ? ~0u : 0u);
    const std::uint32_t y = i < b.words.size() ? b.words[i] : (b.infinite ? ~0u : 0u);
    if ((x & y) != 0) return true;
  }
  return a.infinite && b.infinite;
}

// Whether every bit of a is in b.
bool inside(const bitmap_words& a, const bitmap_words& b) {
  if (a.infinite && !b.infinite) return false;
  const std::size_t n = std::max(a.words.size(), b.words.size());
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t x = i < a.words.size() ? a.words[i] : (a.infinite ? ~0u : 0u);
    const std::uint32_t y = i < b.words.size() ? b.words[i] : (b.infinite ? ~0u : 0u);
    if ((x & ~y) != 0) return false;
  }
  return true;
}

bool empty_bitmap(const bitmap_words& a) {
  return !a.infinite && std::all_of(a.words.begin(), a.words.end(), [](std::uint32_t w) { return w == 0; });
}

// hwloc 2.9 sizes a bitmap by a PU's or a NUMA node's os_index, a missing one counting as
// 2^32 - 1: <object type="PU"> without os_index, or with os_index="4294967294", costs it 8 s and
// 1 GB (found by tests/fuzz/topology_xml_fuzz.cpp). Real indexes are small: Linux numbers CPUs
// below NR_CPUS (at most 8192) and nodes below MAX_NUMNODES (1024); the largest in
// tests/data/topologies are PU 383 and NUMANode 73.
constexpr std::size_t kMaxPuOrNodeOsIndex = std::size_t{1} << 20;

// Whether hwloc reads `type` as PU or NUMANode: case-insensitively, its leading letters naming
// the type or abbreviating it to two letters or more ("pu", "Nu", "numa", "Node").
bool names_pu_or_numa_node(std::string_view type) {
  std::string word;
  for (const char c : type) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) break;
    word += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  }
  if (word.size() < 2) return false;
  return word == "pu" || std::string_view("numanode").starts_with(word) || std::string_view("node").starts_with(word);
}

// A decimal os_index below kMaxPuOrNodeOsIndex (hwloc writes them with %u).
bool is_small_index(std::string_view v) {
  if (v.empty() || v.size() > 7 || !std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; })) return false;
  return std::stoul(std::string(v)) < kMaxPuOrNodeOsIndex;
}

using attribute = std::pair<std::string_view, std::string_view>;

const std::string_view* find_attr(const std::vector<attribute>& attrs, std::string_view name) {
  for (const auto& a : attrs) {
    if (a.first == name) return &a.second;
  }
  return nullptr;
}

struct open_element {
  std::string_view name;
  std::size_t pos = 0;
};

class checker {
 public:
  checker(std::string_view text, int newest_major) : t_(text), newest_major_(newest_major) {}

  xml_check_result run() {
    if (all_space(t_)) return {xml_verdict::empty, "the document is empty"};
    if (const std::size_t bad = forbidden_control(); bad != std::string_view::npos) {
      return fail(xml_verdict::malformed, bad,
                  "byte " + hex_byte(t_[bad]) + " is not allowed in XML (of the control characters only tab, newline and carriage return are)");
    }
    while (true) {
      const std::size_t lt = t_.find('<', pos_);
      const std::string_view chars = t_.substr(pos_, lt == std::string_view::npos ? std::string_view::npos : lt - pos_);
      if (open_.empty() && !all_space(chars)) return fail(xml_verdict::malformed, pos_, "text outside the <topology> element");
      if (lt == std::string_view::npos) break;
      pos_ = lt;
      xml_check_result r = markup();
      if (r.verdict != xml_verdict::ok) return r;
    }
    if (!open_.empty()) {
      const open_element& e = open_.back();
      return fail(xml_verdict::truncated, t_.size(), "the document ends inside <" + std::string(e.name) + "> opened at line " + std::to_string(line_of(e.pos)));
    }
    if (!root_seen_) return fail(xml_verdict::malformed, t_.size(), "no <topology> element");
    return {};
  }

 private:
  std::string_view t_;
  int newest_major_;
  std::size_t pos_ = 0;
  std::vector<open_element> open_;
  bool root_seen_ = false;

  // The first control character XML 1.0 forbids (its Char production admits only #x9, #xA and
  // #xD below #x20), or npos. hwloc's importer reads the document as a C string: a NUL inside
  // an attribute value, as in <topology version="2.0\0">, ends it there and hwloc 2.9 dies with
  // SIGSEGV in strspn (found by tests/fuzz/topology_xml_fuzz.cpp).
  std::size_t forbidden_control() const {
    for (std::size_t i = 0; i < t_.size(); ++i) {
      const auto u = static_cast<unsigned char>(t_[i]);
      if (u < 0x20 && u != '\t' && u != '\n' && u != '\r') return i;
    }
    return std::string_view::npos;
  }
  static std::string hex_byte(char c) {
    constexpr char kDigits[] = "0123456789abcdef";
    const auto u = static_cast<unsigned char>(c);
    return std::string("0x") + kDigits[u >> 4] + kDigits[u & 0xf];
  }

  int line_of(std::size_t pos) const {
    const std::size_t end = std::min(pos, t_.size());
    return 1 + static_cast<int>(std::count(t_.begin(), t_.begin() + static_cast<std::ptrdiff_t>(end), '\n'));
  }
  xml_check_result fail(xml_verdict v, std::size_t pos, const std::string& what) const {
    return {v, "line " + std::to_string(line_of(pos)) + ": " + what};
  }
  bool at(std::string_view s) const { return t_.substr(pos_, s.size()) == s; }

  // Skips to just past `end`; false when the document ends first.
  bool skip_past(std::string_view end) {
    const std::size_t p = t_.find(end, pos_);
    if (p == std::string_view::npos) return false;
    pos_ = p + end.size();
    return true;
  }
  std::string_view name() {
    const std::size_t start = pos_;
    while (pos_ < t_.size() && is_name_char(t_[pos_])) ++pos_;
    return t_.substr(start, pos_ - start);
  }
  void skip_space() {
    while (pos_ < t_.size() && is_space(t_[pos_])) ++pos_;
  }

  xml_check_result markup() {
    const std::size_t start = pos_;
    if (at("<?")) {
      if (!skip_past("?>")) return fail(xml_verdict::truncated, start, "unterminated <? ... ?>");
      if (const xml_check_result r = processing_instruction(start); r.verdict != xml_verdict::ok) return r;
      return header_line(start);
    }
    if (at("<!--")) {
      return skip_past("-->") ? xml_check_result{} : fail(xml_verdict::truncated, start, "unterminated comment");
    }
    if (at("<![CDATA[")) {
      if (open_.empty()) return fail(xml_verdict::malformed, start, "CDATA outside the <topology> element");
      return skip_past("]]>") ? xml_check_result{} : fail(xml_verdict::truncated, start, "unterminated CDATA section");
    }
    if (at("<!")) {
      if (const xml_check_result r = declaration(start); r.verdict != xml_verdict::ok) return r;
      return header_line(start);
    }
    if (at("</")) return end_tag(start);
    return start_tag(start);
  }

  // `<?...?>` just skipped, from `start`. In the XML declaration (<?xml ...?>), the encoding must
  // keep the markup in ASCII bytes, as this check reads it: libxml2, hwloc's importer, decodes the
  // document in the declared encoding, so with "EBCDIC" hwloc would read another document than
  // the one checked here (it refuses it with a bare EINVAL, and libxml2 leaks the converter it
  // registered once hwloc unloads it: found by tests/fuzz/topology_xml_fuzz.cpp). hwloc writes UTF-8.
  xml_check_result processing_instruction(std::size_t start) const {
    const std::string_view pi = t_.substr(start, pos_ - start);
    if (pi.substr(0, 5) != "<?xml" || is_name_char(pi[5])) return {};
    std::size_t at_encoding = pi.find("encoding");
    while (at_encoding != std::string_view::npos && !is_space(pi[at_encoding - 1])) at_encoding = pi.find("encoding", at_encoding + 1);
    if (at_encoding == std::string_view::npos) return {};
    std::size_t i = at_encoding + 8;
    while (i < pi.size() && is_space(pi[i])) ++i;
    if (i < pi.size() && pi[i] == '=') ++i;
    while (i < pi.size() && is_space(pi[i])) ++i;
    const char quote = i < pi.size() ? pi[i] : '\0';
    const std::size_t close = quote == '"' || quote == '\'' ? pi.find(quote, i + 1) : std::string_view::npos;
    if (close == std::string_view::npos) return fail(xml_verdict::malformed, start, "the XML declaration's encoding is not a quoted name");
    const std::string_view name = pi.substr(i + 1, close - i - 1);
    std::string lower;
    for (const char c : name) lower += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    if (lower == "utf-8" || lower == "us-ascii" || lower == "ascii" || lower.starts_with("iso-8859-")) return {};
    return fail(xml_verdict::malformed, start,
                "the XML declaration names encoding '" + std::string(name) + "'; hwloc XML is UTF-8 (numart reads UTF-8, ASCII or ISO-8859-*)");
  }

  // The markup just skipped, from `start`, as hwloc 2.9's own importer reads it: while the text
  // starts with "<?xml " or "<!DOCTYPE ", it skips that line whole, up to its newline, and then
  // reads the next line as the root. Such a header must therefore fill its line: no newline
  // inside it (hwloc would read the rest of it as the document: `<?xml version="2.0oc2.dtd">`
  // with its "?>" four lines down hid an object that crashed hwloc with SIGSEGV, found by
  // tests/fuzz/topology_xml_fuzz.cpp) and nothing after it on its line but blanks (hwloc would
  // skip a comment's start there and read the comment's body). hwloc writes one header per line.
  xml_check_result header_line(std::size_t start) {
    const std::string_view markup = t_.substr(start, pos_ - start);
    if (!markup.starts_with("<?xml ") && !markup.starts_with("<!DOCTYPE ")) return {};
    if (markup.find('\n') != std::string_view::npos)
      return fail(xml_verdict::malformed, start, "a header (<?xml or <!DOCTYPE) over several lines: hwloc reads it line by line");
    std::size_t i = pos_;
    while (i < t_.size() && (t_[i] == ' ' || t_[i] == '\t' || t_[i] == '\r')) ++i;
    if (i < t_.size() && t_[i] != '\n')
      return fail(xml_verdict::malformed, start, "markup after a header (<?xml or <!DOCTYPE) on its line: hwloc skips the rest of that line");
    return {};
  }

  // <!DOCTYPE ...>, only before the root. It ends at the first '>' outside quotes, as libxml2
  // reads it (a '>' inside a quoted literal ended it early here, and the check validated a
  // decoy root that libxml2 read as part of the literal). No internal subset: libxml2 would
  // apply its entities and defaults to the document this check reads raw; hwloc never writes one.
  xml_check_result declaration(std::size_t start) {
    if (root_seen_) return fail(xml_verdict::malformed, start, "<! declaration after the root element");
    for (++pos_; pos_ < t_.size(); ++pos_) {
      const char c = t_[pos_];
      if (c == '[') return fail(xml_verdict::malformed, start, "a DOCTYPE with an internal subset ('['): hwloc never writes one");
      if (c == '"' || c == '\'') {
        const std::size_t close = t_.find(c, pos_ + 1);
        if (close == std::string_view::npos) break;
        pos_ = close;
      } else if (c == '>') {
        ++pos_;
        return {};
      }
    }
    return fail(xml_verdict::truncated, start, "unterminated <!DOCTYPE");
  }

  xml_check_result end_tag(std::size_t start) {
    pos_ += 2;
    const std::string_view n = name();
    skip_space();
    if (pos_ >= t_.size()) return fail(xml_verdict::truncated, start, "the document ends inside </" + std::string(n));
    if (t_[pos_] != '>') return fail(xml_verdict::malformed, start, "bad closing tag </" + std::string(n));
    ++pos_;
    if (open_.empty()) return fail(xml_verdict::malformed, start, "</" + std::string(n) + "> closes nothing");
    if (open_.back().name != n) {
      return fail(xml_verdict::malformed, start,
                  "</" + std::string(n) + "> closes <" + std::string(open_.back().name) + "> opened at line " + std::to_string(line_of(open_.back().pos)));
    }
    open_.pop_back();
    return {};
  }

  // Below the root, attributes are read as hwloc 2.9's own importer reads them: a name of
  // [a-z_] directly followed by ="; only space, tab or newline between attributes; '&' only in
  // the seven escapes it decodes. At anything else it stops reading the tag's attributes, with
  // no error, and loads the object with those read so far: a cpuset without the
  // complete_cpuset written after it in single quotes crashed hwloc with SIGSEGV (a review's
  // find). hwloc writes every attribute so. (The root's attributes it reads with sscanf.)
  static constexpr const char* hwloc_stops = ": hwloc's importer would drop it and every attribute after it";
  static bool hwloc_escapes_only(std::string_view v) {
    for (std::size_t amp = v.find('&'); amp != std::string_view::npos; amp = v.find('&', amp + 1)) {
      const std::string_view rest = v.substr(amp + 1);
      bool known = false;
      for (const std::string_view e : {"#10;", "#13;", "#9;", "quot;", "lt;", "gt;", "amp;"}) known = known || rest.starts_with(e);
      if (!known) return false;
    }
    return true;
  }

  xml_check_result start_tag(std::size_t start) {
    if (root_seen_ && open_.empty()) return fail(xml_verdict::malformed, start, "a second root element");
    ++pos_;
    const std::string_view n = name();
    if (n.empty()) return fail(xml_verdict::malformed, start, "'<' is not followed by an element name");
    const std::string tag = "<" + std::string(n) + ">";
    std::vector<attribute> attrs;
    bool self_closing = false;
    while (true) {
      const std::size_t before = pos_;
      skip_space();
      if (pos_ >= t_.size()) return fail(xml_verdict::truncated, start, "the document ends inside the tag " + tag);
      if (t_[pos_] == '>') {
        ++pos_;
        break;
      }
      if (t_[pos_] == '/') {
        if (pos_ + 1 >= t_.size()) return fail(xml_verdict::truncated, start, "the document ends inside the tag " + tag);
        if (t_[pos_ + 1] != '>') return fail(xml_verdict::malformed, start, "stray '/' in " + tag);
        pos_ += 2;
        self_closing = true;
        break;
      }
      if (pos_ == before) return fail(xml_verdict::malformed, start, "attributes of " + tag + " are not separated by spaces");
      if (root_seen_ && t_.substr(before, pos_ - before).find('\r') != std::string_view::npos)
        return fail(xml_verdict::malformed, start, "a carriage return between attributes of " + tag + hwloc_stops);
      const std::string_view attr = name();
      if (attr.empty()) return fail(xml_verdict::malformed, start, std::string("unexpected '") + t_[pos_] + "' in " + tag);
      if (root_seen_) {
        if (!std::all_of(attr.begin(), attr.end(), [](char c) { return (c >= 'a' && c <= 'z') || c == '_'; }))
          return fail(xml_verdict::malformed, start, "attribute name " + std::string(attr) + " of " + tag + " is not [a-z_]" + hwloc_stops);
        if (pos_ + 2 <= t_.size() && t_.substr(pos_, 2) != "=\"")  // else truncated, below
          return fail(xml_verdict::malformed, start, "attribute " + std::string(attr) + " of " + tag + " is not written name=\"value\"" + hwloc_stops);
      }
      skip_space();
      if (pos_ >= t_.size()) return fail(xml_verdict::truncated, start, "the document ends inside the tag " + tag);
      if (t_[pos_] != '=') return fail(xml_verdict::malformed, start, "attribute " + std::string(attr) + " of " + tag + " has no value");
      ++pos_;
      skip_space();
      if (pos_ >= t_.size()) return fail(xml_verdict::truncated, start, "the document ends inside the tag " + tag);
      const char quote = t_[pos_];
      if (quote != '"' && quote != '\'') return fail(xml_verdict::malformed, start, "attribute " + std::string(attr) + " of " + tag + " is not quoted");
      const std::size_t close = t_.find(quote, pos_ + 1);
      if (close == std::string_view::npos) return fail(xml_verdict::truncated, start, "the document ends inside the tag " + tag);
      const std::string_view value = t_.substr(pos_ + 1, close - pos_ - 1);
      if (value.find('<') != std::string_view::npos) return fail(xml_verdict::malformed, start, "'<' inside attribute " + std::string(attr) + " of " + tag);
      // XML allows a raw '>' in a value; hwloc's own importer ends the tag at it and reads on from
      // there. hwloc writes "&gt;".
      if (value.find('>') != std::string_view::npos)
        return fail(xml_verdict::malformed, start, "'>' inside attribute " + std::string(attr) + " of " + tag + " (hwloc writes &gt;)");
      if (root_seen_ && !hwloc_escapes_only(value))
        return fail(xml_verdict::malformed, start, "an '&' in attribute " + std::string(attr) + " of " + tag + " that is not one of hwloc's escapes" + hwloc_stops);
      if (find_attr(attrs, attr) != nullptr) return fail(xml_verdict::malformed, start, "attribute " + std::string(attr) + " repeated in " + tag);
      attrs.emplace_back(attr, value);
      pos_ = close + 1;
    }
    if (!root_seen_) {
      xml_check_result r = root(n, attrs, start);
      if (r.verdict != xml_verdict::ok) return r;
      root_seen_ = true;
    }
    if (n == "object") {
      xml_check_result r = object(attrs, start);
      if (r.verdict != xml_verdict::ok) return r;
      // The top object is the machine: hwloc 2.9 aborts (an assertion in
      // hwloc__find_insert_memory_parent) on a document whose top object is a PU. hwloc writes
      // Machine (System in some 1.x files), as every file in tests/data/topologies has.
      if (open_.size() == 1) {
        const std::string_view type = *find_attr(attrs, "type");  // object() refused a missing type
        if (type != "Machine" && type != "System")
          return fail(xml_verdict::inconsistent, start, "the top <object> is a " + std::string(type) + ", not the Machine");
      }
    }
    if (!self_closing) open_.push_back({n, start});
    return {};
  }

  xml_check_result root(std::string_view n, const std::vector<attribute>& attrs, std::size_t start) const {
    if (n != "topology") return fail(xml_verdict::malformed, start, "the root element is <" + std::string(n) + ">, not <topology>");
    const std::string_view* version = find_attr(attrs, "version");
    if (version == nullptr) return {};  // hwloc 1.x documents carry no version
    const std::string_view v = *version;
    std::size_t digits = 0;
    while (digits < v.size() && v[digits] >= '0' && v[digits] <= '9') ++digits;
    if (digits == 0 || digits > 4) return fail(xml_verdict::malformed, start, "<topology version=\"" + std::string(v) + "\"> is not a version number");
    const int major = std::stoi(std::string(v.substr(0, digits)));
    if (major > newest_major_) {
      return fail(xml_verdict::unsupported_version, start,
                  "XML format version " + std::string(v) + " is newer than this hwloc reads (format " + std::to_string(newest_major_) + ".x and older)");
    }
    return {};
  }

  // hwloc 2.9's importer takes an object's complete_cpuset for granted once it has a cpuset,
  // and its complete_nodeset once it has a nodeset: without them hwloc_topology_load dies with
  // SIGSEGV (found by mutating tests/data/topologies/32em64t-2n8c2t-pci-noio.xml; regression
  // tests in tests/unit/topology/xml_check_test.cpp). A bitmap it cannot parse does not crash
  // it but is read as garbage (cpuset="zz" silently drops a PU), so that is refused too.
  xml_check_result object(const std::vector<attribute>& attrs, std::size_t start) const {
    const std::string_view* type = find_attr(attrs, "type");
    if (type == nullptr) return fail(xml_verdict::inconsistent, start, "<object> without a type attribute");
    for (const std::string_view set : {"cpuset", "complete_cpuset", "allowed_cpuset", "nodeset", "complete_nodeset", "allowed_nodeset"}) {
      const std::string_view* value = find_attr(attrs, set);
      if (value != nullptr && !is_bitmap(*value)) {
        return fail(xml_verdict::inconsistent, start, "<object> attribute " + std::string(set) + "=\"" + std::string(*value) + "\" is not an hwloc bitmap");
      }
    }
    if (find_attr(attrs, "cpuset") != nullptr && find_attr(attrs, "complete_cpuset") == nullptr) {
      return fail(xml_verdict::inconsistent, start, "<object> has a cpuset but no complete_cpuset");
    }
    if (find_attr(attrs, "nodeset") != nullptr && find_attr(attrs, "complete_nodeset") == nullptr) {
      return fail(xml_verdict::inconsistent, start, "<object> has a nodeset but no complete_nodeset");
    }
    // A cpuset with PUs outside its complete_cpuset: hwloc 2.9 dies with SIGSEGV in
    // hwloc_topology_load on one that shares no PU with it (cpuset 0x2f against complete 0x0 or
    // 0x10, with a nodeset; found by tests/fuzz/topology_xml_fuzz.cpp in CI, session 19), and
    // with an allowed_cpuset that keeps only such PUs (cpuset 0x2f, complete 0x5f, allowed 0xf0;
    // found by the same fuzzer before). hwloc writes the complete set as a superset of the
    // cpuset, so any PU outside it is refused.
    if (const std::string_view* cpuset = find_attr(attrs, "cpuset")) {
      const std::string_view* complete = find_attr(attrs, "complete_cpuset");
      if (!inside(words_of(*cpuset), words_of(*complete))) {
        return fail(xml_verdict::inconsistent, start,
                    "<object> cpuset=\"" + std::string(*cpuset) + "\" has PUs outside complete_cpuset=\"" + std::string(*complete) + "\"");
      }
    }
    // An allowed_cpuset that shares no PU with a non-empty cpuset or complete_cpuset: hwloc 2.9
    // restricts the topology to no PU and, with a nodeset, dies with SIGSEGV in
    // hwloc_topology_load ("Topology became empty"). Found by tests/fuzz/topology_xml_fuzz.cpp
    // twice: against the complete_cpuset, then (an allowed set inside the complete one but
    // outside the cpuset) against the cpuset. hwloc never writes one.
    if (const std::string_view* allowed = find_attr(attrs, "allowed_cpuset")) {
      for (const std::string_view set : {"complete_cpuset", "cpuset"}) {
        const std::string_view* value = find_attr(attrs, set);
        if (value == nullptr) continue;
        const bitmap_words c = words_of(*value);
        if (!empty_bitmap(c) && !intersect(words_of(*allowed), c)) {
          return fail(xml_verdict::inconsistent, start,
                      "<object> allowed_cpuset=\"" + std::string(*allowed) + "\" shares no PU with " + std::string(set) +
                          "=\"" + std::string(*value) + "\"");
        }
      }
    }
    if (names_pu_or_numa_node(*type)) {
      const std::string_view* index = find_attr(attrs, "os_index");
      const std::string tag = "<object type=\"" + std::string(*type) + "\">";
      if (index == nullptr) return fail(xml_verdict::inconsistent, start, tag + " without os_index");
      if (!is_small_index(*index)) {
        return fail(xml_verdict::inconsistent, start,
                    tag + " os_index=\"" + std::string(*index) + "\" is not a decimal index below " + std::to_string(kMaxPuOrNodeOsIndex));
      }
    }
    return {};
  }
};

}  // namespace

xml_check_result check_hwloc_xml(std::string_view text, int newest_format_major) { return checker(text, newest_format_major).run(); }

}  // namespace rt::topo
