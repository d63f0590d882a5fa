#include "trace/stats_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

#include "stats/counters.hpp"
#include "trace/json.hpp"

namespace rt::trace {
namespace {

constexpr const char* kFormat = "numart-stats";
constexpr int kVersion = 1;
constexpr std::int64_t kMaxNode = 65535;

std::string doc_of(const std::string& name) {
  for (const ctr::counter_info& c : ctr::kCounterInfo) {
    if (name == c.name) return c.doc;
  }
  return "";
}

[[noreturn]] void bad(const std::string& what) { throw format_error("damaged stats file: " + what); }

const json_value& need(const json_value& v, std::string_view key, const std::string& where) {
  const json_value* m = v.find(key);
  if (m == nullptr) bad(where + ": no '" + std::string(key) + "'");
  return *m;
}

const std::string& need_string(const json_value& v, std::string_view key, const std::string& where) {
  const json_value& m = need(v, key, where);
  if (!m.is_string()) bad(where + ": '" + std::string(key) + "' is not a string");
  return m.text;
}

std::int64_t need_int(const json_value& v, std::string_view key, const std::string& where) {
  const std::optional<std::int64_t> i = need(v, key, where).as_int();
  if (!i) bad(where + ": '" + std::string(key) + "' is not an integer");
  return *i;
}

// A row: exactly the counters of `names`, in any order.
std::vector<std::uint64_t> read_row(const json_value& row, const std::vector<std::string>& names, const std::string& where) {
  if (!row.is_object()) bad(where + " is not an object");
  std::vector<std::uint64_t> out;
  for (const std::string& n : names) {
    const json_value* v = row.find(n);
    if (v == nullptr) bad(where + ": no counter '" + n + "'");
    const std::optional<std::uint64_t> u = v->as_uint();
    if (!u) bad(where + "." + n + " is not a non-negative integer");
    out.push_back(*u);
  }
  if (row.members.size() != names.size()) {
    for (const json_member& m : row.members) {
      bool known = false;
      for (const std::string& n : names) known = known || n == m.key;
      if (!known) bad(where + ": counter '" + m.key + "' is not in the counter list");
    }
  }
  return out;
}

}  // namespace

std::string stats_json(const rt::stats& s) {
  std::ostringstream os;
  json_out j(os);
  const auto row = [&](const std::vector<std::uint64_t>& values) {
    j.begin_object();
    for (std::size_t i = 0; i < s.counter_names.size(); ++i) j.key(s.counter_names[i]).value(i < values.size() ? values[i] : 0);
    j.end_object();
  };
  j.begin_object();
  j.key("format").value(kFormat);
  j.key("version").value(kVersion);
  j.key("topology").value(s.topology);
  j.key("virtual_topology").value(s.virtual_topology);
  j.key("counters").begin_array();
  for (std::size_t i = 0; i < s.counter_names.size(); ++i) {
    j.newline().begin_object();
    j.key("name").value(s.counter_names[i]);
    j.key("unit").value(i < s.counter_units.size() ? s.counter_units[i] : std::string());
    j.key("doc").value(doc_of(s.counter_names[i]));
    j.end_object();
  }
  j.end_array();
  j.key("workers").begin_array();
  for (std::size_t w = 0; w < s.per_worker.size(); ++w) {
    j.newline().begin_object();
    j.key("worker").value(w);
    j.key("node").value(w < s.worker_node.size() ? s.worker_node[w] : -1);
    j.key("counters");
    row(s.per_worker[w]);
    j.end_object();
  }
  j.end_array();
  j.newline().key("outside");
  row(s.outside);
  j.newline().key("tunables").value(s.tunables);
  j.end_object();
  j.finish();
  return os.str();
}

bool write_stats_file(const rt::stats& s, const std::string& path, std::ostream& err) {
  const std::string prefix = "numart: stats file '" + path + "': ";
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  std::string text;
  try {
    text = stats_json(s);
  } catch (const format_error& e) {
    err << prefix << e.what() << "\n";
    return false;
  }
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) {
      err << prefix << "cannot create '" << tmp << "': " << std::strerror(errno) << "\n";
      return false;
    }
    out << text;
    out.flush();
    if (!out) {
      err << prefix << "cannot write '" << tmp << "' (the device is full?)\n";
      out.close();
      std::remove(tmp.c_str());
      return false;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    err << prefix << "cannot replace it: " << std::strerror(errno) << "\n";
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}

stats_document parse_stats(std::string_view text) {
  const json_value doc = parse_json(text);
  if (!doc.is_object()) throw format_error("not a numart stats file: the document is not a JSON object");
  const json_value* format = doc.find("format");
  if (format == nullptr || !format->is_string() || format->text != kFormat) {
    throw format_error("not a numart stats file: no \"format\": \"numart-stats\"");
  }
  const json_value* version = doc.find("version");
  if (version == nullptr || version->as_int() != std::optional<std::int64_t>(kVersion)) {
    throw format_error("unsupported stats file version " + (version != nullptr ? version->text : std::string("(none)")) +
                       " (this numart reads version 1)");
  }
  stats_document out;
  rt::stats& s = out.stats;
  s.topology = need_string(doc, "topology", "stats");
  const json_value& virt = need(doc, "virtual_topology", "stats");
  if (virt.t != json_value::type::boolean) bad("'virtual_topology' is not true or false");
  s.virtual_topology = virt.b;
  s.tunables = need_string(doc, "tunables", "stats");

  const json_value& counters = need(doc, "counters", "stats");
  if (!counters.is_array()) bad("'counters' is not an array");
  for (std::size_t i = 0; i < counters.items.size(); ++i) {
    const std::string at = "counters[" + std::to_string(i) + "]";
    const json_value& c = counters.items[i];
    if (!c.is_object()) bad(at + " is not an object");
    const std::string& name = need_string(c, "name", at);
    if (name.empty()) bad(at + ": the name is empty");
    for (const std::string& seen : s.counter_names) {
      if (seen == name) bad(at + ": counter '" + name + "' is listed twice");
    }
    s.counter_names.push_back(name);
    s.counter_units.push_back(need_string(c, "unit", at));
    out.counter_docs.push_back(need_string(c, "doc", at));
  }

  const json_value& workers = need(doc, "workers", "stats");
  if (!workers.is_array()) bad("'workers' is not an array");
  for (std::size_t w = 0; w < workers.items.size(); ++w) {
    const std::string at = "workers[" + std::to_string(w) + "]";
    const json_value& row = workers.items[w];
    if (!row.is_object()) bad(at + " is not an object");
    if (need_int(row, "worker", at) != static_cast<std::int64_t>(w)) bad(at + ": 'worker' is not " + std::to_string(w));
    const std::int64_t node = need_int(row, "node", at);
    if (node < 0 || node > kMaxNode) bad(at + ": 'node' is out of range (0-" + std::to_string(kMaxNode) + ")");
    s.worker_node.push_back(static_cast<int>(node));
    s.per_worker.push_back(read_row(need(row, "counters", at), s.counter_names, at + ".counters"));
  }
  if (const json_value* outside = doc.find("outside"); outside != nullptr) {
    s.outside = read_row(*outside, s.counter_names, "outside");
  }
  return out;
}

stats_document read_stats_file(const std::string& path) { return parse_stats(read_text_file(path)); }

}  // namespace rt::trace
