// The runtime-independent half of numart_jbb: tables, the deck, the six transactions, locality
// accounting with the emulated memory cost, latency histograms and the measuring loop.
#include "workload.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>
#include <ostream>
#include <stdexcept>
#include <thread>

#include "rt/rt.hpp"

namespace jbb {

namespace {

constexpr std::size_t kPage = 4096;
constexpr std::size_t kChunkBytes = 4096;  // locality is counted once per touched 4 KiB chunk
constexpr int kDistricts = 10;
constexpr int kMaxLines = 15;
constexpr int kMinLines = 5;
constexpr std::uint32_t kRemoteLinePerCent = 1;  // SPECjbb: 1% of order lines from another warehouse
constexpr std::uint32_t kPaymentByNamePerCent = 40;
constexpr std::uint32_t kNamesPerDistrictDivisor = 3;  // about three customers share a last name
constexpr std::uint32_t kReportOrders = 64;       // customer-report: recent orders and payments scanned
constexpr std::uint32_t kStockLevelOrders = 20;   // TPC-C: the last 20 orders of the district
constexpr std::uint32_t kTaxScale = 10000;        // tax in basis points
constexpr std::uint64_t kLcgMul = 6364136223846793005ULL;  // Knuth's MMIX LCG
constexpr std::uint64_t kLcgAdd = 1442695040888963407ULL;

// ---- rows (plain structs) ----

struct warehouse_row {
  std::int64_t ytd_cents;
  std::uint32_t tax_bp;
  std::uint32_t history_next;  // next slot of the history ring
};
struct district_row {
  std::int64_t ytd_cents;
  std::uint32_t tax_bp;
  std::uint32_t next_order;        // id of the next order
  std::uint32_t oldest_new_order;  // first undelivered order id
  std::uint32_t pad;
};
struct district_table {
  warehouse_row w;
  district_row d[kDistricts];
};
struct customer_row {
  std::int64_t balance_cents;
  std::int64_t ytd_payment_cents;
  std::uint32_t payment_count;
  std::uint32_t delivery_count;
  std::uint32_t last_order;  // id of the customer's last order, or ~0
  std::uint32_t name_key;    // stands for the last name
  std::uint32_t discount_bp;
  char data[60];
};
struct item_row {
  std::uint32_t price_cents;
  std::uint32_t id;
  char name[24];
  char data[32];
};
// Stock rows are the one table other warehouses write (remote order lines): their counters are
// updated through std::atomic_ref (relaxed: independent counters, no data is published by them).
struct stock_row {
  std::int32_t quantity;
  std::uint32_t ytd;
  std::uint32_t order_count;
  std::uint32_t remote_count;
  char dist_info[48];
};
struct order_line {
  std::uint32_t item;
  std::uint16_t supply_warehouse;  // index in the instance
  std::uint16_t quantity;
  std::uint32_t amount_cents;
  std::uint32_t pad;
};
struct order_row {
  std::uint32_t id;  // ~0: empty slot
  std::uint32_t customer;
  std::uint32_t carrier;  // 0: not delivered
  std::uint32_t line_count;
  order_line lines[kMaxLines];
};
struct history_row {
  std::int64_t amount_cents;
  std::uint32_t customer;
  std::uint32_t district;
  std::uint64_t seq;
};
static_assert(sizeof(stock_row) == 64 && sizeof(item_row) == 64 && sizeof(order_row) == 256);

constexpr std::uint32_t kEmpty = ~std::uint32_t{0};

std::size_t row_bytes(int t) {
  switch (t) {
    case t_district: return sizeof(district_table);
    case t_customer: return sizeof(customer_row);
    case t_item: return sizeof(item_row);
    case t_stock: return sizeof(stock_row);
    case t_order: return sizeof(order_row);
    case t_new_order: return sizeof(std::uint32_t);
    case t_history: return sizeof(history_row);
    default: throw std::logic_error("jbb: bad table id");
  }
}

std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// The emulated memory cost: a dependent chain of multiply-adds (about 4 cycles each) that the
// compiler cannot shorten. Real work, not a sleep: it occupies the worker like a stall would.
std::uint64_t burn(std::uint64_t iterations, std::uint64_t x) {
  for (std::uint64_t i = 0; i < iterations; ++i) x = x * kLcgMul + kLcgAdd;
  return x;
}

std::uint64_t elapsed_ns(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count());
}

}  // namespace

// ---- accessor: locality per touched chunk ----

class accessor {
 public:
  accessor(const machine& m, int worker_node) : m_(m), node_(worker_node) { recent_.fill(0); }

  template <class T>
  T& at(T* p) {
    touch(p);
    return *p;
  }
  // Counts the chunk of `p` once per transaction (the last kRecent chunks are remembered):
  // local when rt::node_of(p), the node the data is on now, is the worker's node.
  void touch(const void* p) {
    const std::uintptr_t chunk = reinterpret_cast<std::uintptr_t>(p) / kChunkBytes + 1;
    for (std::uintptr_t c : recent_)
      if (c == chunk) return;
    recent_[next_++ % kRecent] = chunk;
    const int data = rt::node_of(p).value;
    if (data < 0 || node_ < 0) {
      ++unknown;
      return;
    }
    if (data == node_)
      ++local;
    else
      ++remote;
    sink = burn(chunk_cost(m_, node_, data), sink + chunk);
  }

  std::uint64_t local = 0, remote = 0, unknown = 0, sink = 0;

 private:
  static constexpr unsigned kRecent = 8;
  const machine& m_;
  int node_;
  std::array<std::uintptr_t, kRecent> recent_{};
  unsigned next_ = 0;
};

// ---- names ----

const char* txn_name(txn t) {
  switch (t) {
    case txn::new_order: return "new_order";
    case txn::payment: return "payment";
    case txn::customer_report: return "customer_report";
    case txn::order_status: return "order_status";
    case txn::delivery: return "delivery";
    case txn::stock_level: return "stock_level";
  }
  return "?";
}

const char* table_name(int t) {
  static const char* const names[kTables] = {"district", "customer", "item", "stock", "order", "new_order", "history"};
  return t >= 0 && t < kTables ? names[t] : "?";
}

// ---- rng and deck ----

std::uint64_t rng::next() {
  state_ += 0x9e3779b97f4a7c15ULL;
  return mix64(state_);
}
std::uint32_t rng::below(std::uint32_t n) {
  return static_cast<std::uint32_t>(((next() >> 32) * static_cast<std::uint64_t>(n)) >> 32);
}

deck::deck(std::uint64_t seed) : rng_(seed) {
  int i = 0;
  const auto put = [&](txn t, int n) {
    for (int k = 0; k < n; ++k) cards_[static_cast<std::size_t>(i++)] = t;
  };
  put(txn::new_order, 10);
  put(txn::payment, 10);
  put(txn::customer_report, 10);
  put(txn::order_status, 1);
  put(txn::delivery, 1);
  put(txn::stock_level, 1);
  shuffle();
}
void deck::shuffle() {
  for (std::uint32_t i = kCards - 1; i > 0; --i) std::swap(cards_[i], cards_[rng_.below(i + 1)]);
}
txn deck::deal() {
  if (next_ == kCards) {
    shuffle();
    next_ = 0;
  }
  return cards_[static_cast<std::size_t>(next_++)];
}

std::uint64_t stream_seed(std::uint64_t seed, int instance, int warehouse, int stream) {
  std::uint64_t z = mix64(seed ^ 0x6a62622d73656564ULL);
  z = mix64(z + static_cast<std::uint64_t>(instance));
  z = mix64(z + static_cast<std::uint64_t>(warehouse));
  return mix64(z + static_cast<std::uint64_t>(stream));
}

std::uint64_t deck_fingerprint(std::uint64_t seed, int instances, int warehouses, int passes) {
  std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a 64
  for (int i = 0; i < instances; ++i)
    for (int w = 0; w < warehouses; ++w) {
      deck d(stream_seed(seed, i, w, 0));
      for (int c = 0; c < passes * deck::kCards; ++c) {
        h ^= static_cast<std::uint64_t>(d.deal());
        h *= 0x100000001b3ULL;
      }
    }
  return h;
}

// ---- histogram ----

int histogram::bucket_of(std::uint64_t ns) {
  if (ns < kLinear) return static_cast<int>(ns);
  const int msb = std::bit_width(ns) - 1;  // >= 6
  const int sub = static_cast<int>((ns >> (msb - kSubBits)) & ((1u << kSubBits) - 1));
  return kLinear + (msb - 6) * (1 << kSubBits) + sub;
}
double histogram::midpoint(int b) {
  if (b < kLinear) return b;
  const int msb = (b - kLinear) / (1 << kSubBits) + 6;
  const int sub = (b - kLinear) % (1 << kSubBits);
  const double lo = std::ldexp(static_cast<double>((1 << kSubBits) + sub), msb - kSubBits);
  return lo + std::ldexp(0.5, msb - kSubBits);
}
void histogram::record(std::uint64_t ns) {
  ++buckets_[static_cast<std::size_t>(bucket_of(ns))];
  ++count_;
  min_ = std::min(min_, ns);
  max_ = std::max(max_, ns);
  const double v = static_cast<double>(ns);
  sum_ += v;
  sum_sq_ += v * v;
}
void histogram::merge(const histogram& o) {
  for (std::size_t i = 0; i < buckets_.size(); ++i) buckets_[i] += o.buckets_[i];
  count_ += o.count_;
  min_ = std::min(min_, o.min_);
  max_ = std::max(max_, o.max_);
  sum_ += o.sum_;
  sum_sq_ += o.sum_sq_;
}
double histogram::percentile_ns(unsigned per_mille) const {
  if (count_ == 0) return 0;
  // The smallest bucket holding the rank ceil(count * p / 1000).
  const std::uint64_t rank = std::max<std::uint64_t>(1, (count_ * per_mille + 999) / 1000);
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < buckets_.size(); ++i) {
    seen += buckets_[i];
    if (seen >= rank) return std::clamp(midpoint(static_cast<int>(i)), static_cast<double>(min_), static_cast<double>(max_));
  }
  return static_cast<double>(max_);
}
double histogram::mean_ns() const { return count_ ? sum_ / static_cast<double>(count_) : 0; }
double histogram::stddev_ns() const {
  if (count_ < 2) return 0;
  const double n = static_cast<double>(count_);
  const double var = (sum_sq_ - sum_ * sum_ / n) / (n - 1);
  return var > 0 ? std::sqrt(var) : 0;
}

latency_summary summarize(const histogram& h) {
  latency_summary s;
  s.count = h.count();
  s.min_us = static_cast<double>(h.min_ns()) / 1e3;
  s.max_us = static_cast<double>(h.max_ns()) / 1e3;
  s.mean_us = h.mean_ns() / 1e3;
  s.stddev_us = h.stddev_ns() / 1e3;
  s.p50_us = h.percentile_ns(500) / 1e3;
  s.p99_us = h.percentile_ns(990) / 1e3;
  return s;
}

// ---- sizing ----

sizing sizing::from_kib(int kib) {
  // A quarter of the budget each for items and stock, the other half for customers, orders,
  // new-orders and history (history: ten payments per customer slot of a district).
  const std::size_t budget = static_cast<std::size_t>(kib) * 1024;
  sizing s;
  s.items = static_cast<std::uint32_t>(std::max<std::size_t>(64, budget / 4 / sizeof(stock_row)));
  const std::size_t per_c = kDistricts * (sizeof(customer_row) + sizeof(order_row) + sizeof(std::uint32_t)) +
                            kDistricts * sizeof(history_row);
  s.customers_per_district = static_cast<std::uint32_t>(std::max<std::size_t>(kStockLevelOrders, budget / 2 / per_c));
  s.orders_per_district = s.customers_per_district;
  s.history = kDistricts * s.customers_per_district;
  return s;
}
std::size_t sizing::bytes(int t) const {
  std::size_t rows = 0;
  switch (t) {
    case t_district: rows = 1; break;
    case t_customer: rows = std::size_t{kDistricts} * customers_per_district; break;
    case t_item:
    case t_stock: rows = items; break;
    case t_order:
    case t_new_order: rows = std::size_t{kDistricts} * orders_per_district; break;
    case t_history: rows = history; break;
    default: throw std::logic_error("jbb: bad table id");
  }
  const std::size_t b = rows * row_bytes(t);
  return (b + kPage - 1) / kPage * kPage;  // whole pages: regions never share a page
}

// ---- warehouse ----

warehouse::warehouse(int instance, int index, const sizing& size, std::uint64_t seed)
    : instance_(instance),
      index_(index),
      size_(size),
      deck_(stream_seed(seed, instance, index, 0)),
      input_(stream_seed(seed, instance, index, 1)) {}

namespace {
template <class T>
T* rows(const table& t) {
  return static_cast<T*>(t.base);
}
}  // namespace

void warehouse::fill() {
  rng r(stream_seed(0, instance_, index_, 2));
  auto* dt = rows<district_table>(tables[t_district]);
  dt->w = warehouse_row{0, r.below(2000), 0};
  for (district_row& d : dt->d) d = district_row{0, r.below(2000), 0, 0, 0};
  const std::uint32_t names = std::max<std::uint32_t>(1, size_.customers_per_district / kNamesPerDistrictDivisor);
  auto* cust = rows<customer_row>(tables[t_customer]);
  for (std::size_t i = 0; i < std::size_t{kDistricts} * size_.customers_per_district; ++i) {
    customer_row& c = cust[i];
    std::memset(&c, 0, sizeof c);
    c.balance_cents = -1000;
    c.last_order = kEmpty;
    c.name_key = r.below(names);
    c.discount_bp = r.below(5000);
    std::memset(c.data, 'c', sizeof c.data);
  }
  auto* items = rows<item_row>(tables[t_item]);
  auto* stock = rows<stock_row>(tables[t_stock]);
  for (std::uint32_t i = 0; i < size_.items; ++i) {
    items[i] = item_row{100 + r.below(9900), i, {}, {}};
    std::memset(items[i].name, 'i', sizeof items[i].name);
    stock[i] = stock_row{static_cast<std::int32_t>(10 + r.below(91)), 0, 0, 0, {}};
    std::memset(stock[i].dist_info, 's', sizeof stock[i].dist_info);
  }
  auto* orders = rows<order_row>(tables[t_order]);
  for (std::size_t i = 0; i < std::size_t{kDistricts} * size_.orders_per_district; ++i) {
    std::memset(&orders[i], 0, sizeof orders[i]);
    orders[i].id = kEmpty;
  }
  std::memset(tables[t_new_order].base, 0xff, tables[t_new_order].bytes);
  std::memset(tables[t_history].base, 0, tables[t_history].bytes);
}

int warehouse::data_node(const machine& m) const {
  std::vector<std::size_t> bytes(static_cast<std::size_t>(m.nodes), 0);
  for (const table& t : tables) {
    const int n = rt::node_of(t.base).value;
    if (n >= 0 && n < m.nodes) bytes[static_cast<std::size_t>(n)] += t.bytes;
  }
  return static_cast<int>(std::max_element(bytes.begin(), bytes.end()) - bytes.begin());
}

bool warehouse::step(int worker_node, const machine& m, const run_control& ctl) {
  const phase ph = ctl.now.load(std::memory_order_acquire);  // pairs with measure()'s release stores
  if (ph == phase::stop) return false;
  const txn t = deck_.deal();
  accessor a(m, worker_node);
  const auto t0 = std::chrono::steady_clock::now();
  const std::uint64_t r = run(t, a);
  const auto t1 = std::chrono::steady_clock::now();
  sink += r + a.sink;
  if (ph == phase::measure) latency[static_cast<std::size_t>(t)].record(elapsed_ns(t0, t1));
  local_chunks.fetch_add(a.local, std::memory_order_relaxed);
  remote_chunks.fetch_add(a.remote, std::memory_order_relaxed);
  unknown_chunks.fetch_add(a.unknown, std::memory_order_relaxed);
  completed.fetch_add(1, std::memory_order_relaxed);
  return true;
}

std::uint64_t warehouse::run(txn t, accessor& a) {
  switch (t) {
    case txn::new_order: return new_order(a);
    case txn::payment: return payment(a);
    case txn::customer_report: return customer_report(a);
    case txn::order_status: return order_status(a);
    case txn::delivery: return delivery(a);
    case txn::stock_level: return stock_level(a);
  }
  return 0;
}

// New-order: 5-15 lines; each reads an item, updates the supplying warehouse's stock (1% of
// lines from another warehouse of the instance) and writes the order, its new-order entry and
// the customer's last order.
std::uint64_t warehouse::new_order(accessor& a) {
  auto* dt = rows<district_table>(tables[t_district]);
  const std::uint32_t d = input_.below(kDistricts);
  const std::uint32_t c = input_.below(size_.customers_per_district);
  const std::uint32_t lines = kMinLines + input_.below(kMaxLines - kMinLines + 1);
  const std::uint32_t cap = size_.orders_per_district;
  district_row& dist = a.at(&dt->d[d]);
  const std::uint32_t id = dist.next_order++;
  if (id - dist.oldest_new_order >= cap) ++dist.oldest_new_order;  // ring full: the oldest is dropped
  customer_row& cust = a.at(&rows<customer_row>(tables[t_customer])[d * size_.customers_per_district + c]);
  order_row& o = a.at(&rows<order_row>(tables[t_order])[d * cap + id % cap]);
  o.id = id;
  o.customer = c;
  o.carrier = 0;
  o.line_count = lines;
  const auto* items = rows<item_row>(tables[t_item]);
  std::uint64_t total = 0;
  for (std::uint32_t l = 0; l < lines; ++l) {
    const std::uint32_t item = input_.below(size_.items);
    const std::uint32_t qty = 1 + input_.below(10);
    warehouse* supply = this;
    if (peers.size() > 0 && input_.below(100) < kRemoteLinePerCent)
      supply = peers[input_.below(static_cast<std::uint32_t>(peers.size()))];
    const item_row& it = a.at(&items[item]);
    stock_row& s = a.at(&rows<stock_row>(supply->tables[t_stock])[item]);
    std::atomic_ref<std::int32_t> q(s.quantity);
    std::int32_t cur = q.load(std::memory_order_relaxed);
    const auto want = static_cast<std::int32_t>(qty);
    while (!q.compare_exchange_weak(cur, cur >= want + 10 ? cur - want : cur - want + 91, std::memory_order_relaxed)) {
    }
    std::atomic_ref<std::uint32_t>(s.ytd).fetch_add(qty, std::memory_order_relaxed);
    std::atomic_ref<std::uint32_t>(s.order_count).fetch_add(1, std::memory_order_relaxed);
    if (supply != this) std::atomic_ref<std::uint32_t>(s.remote_count).fetch_add(1, std::memory_order_relaxed);
    const std::uint32_t amount = qty * it.price_cents;
    o.lines[l] = order_line{item, static_cast<std::uint16_t>(supply->index_), static_cast<std::uint16_t>(qty), amount, 0};
    total += amount;
  }
  total = total * (kTaxScale + dt->w.tax_bp + dist.tax_bp) / kTaxScale * (kTaxScale - cust.discount_bp) / kTaxScale;
  a.at(&rows<std::uint32_t>(tables[t_new_order])[d * cap + id % cap]) = id;
  cust.last_order = id;
  return total;
}

// Payment: warehouse, district and customer year-to-date; the customer by id (60%) or by last
// name (40%: a scan of the district's customers, the middle match, as TPC-C); a history row.
std::uint64_t warehouse::payment(accessor& a) {
  auto* dt = rows<district_table>(tables[t_district]);
  const std::uint32_t d = input_.below(kDistricts);
  const std::int64_t amount = 100 + input_.below(500000);
  warehouse_row& w = a.at(&dt->w);
  w.ytd_cents += amount;
  a.at(&dt->d[d]).ytd_cents += amount;
  customer_row* cust = rows<customer_row>(tables[t_customer]) + d * size_.customers_per_district;
  std::uint32_t c = input_.below(size_.customers_per_district);
  if (input_.below(100) < kPaymentByNamePerCent) {
    const std::uint32_t key = cust[c].name_key;
    std::uint32_t matches[64];
    std::uint32_t n = 0;
    for (std::uint32_t i = 0; i < size_.customers_per_district && n < 64; ++i)
      if (a.at(&cust[i]).name_key == key) matches[n++] = i;
    c = matches[n / 2];  // n >= 1: customer c itself matches
  }
  customer_row& cr = a.at(&cust[c]);
  cr.balance_cents -= amount;
  cr.ytd_payment_cents += amount;
  ++cr.payment_count;
  const std::uint32_t slot = w.history_next++ % size_.history;
  a.at(&rows<history_row>(tables[t_history])[slot]) = history_row{amount, c, d, w.history_next};
  return static_cast<std::uint64_t>(cr.balance_cents);
}

// Customer-report: a customer, the district's recent orders that are theirs (with their lines)
// and their recent payments from the history ring.
std::uint64_t warehouse::customer_report(accessor& a) {
  auto* dt = rows<district_table>(tables[t_district]);
  const std::uint32_t d = input_.below(kDistricts);
  const std::uint32_t c = input_.below(size_.customers_per_district);
  const std::uint32_t cap = size_.orders_per_district;
  const customer_row& cr = a.at(&rows<customer_row>(tables[t_customer])[d * size_.customers_per_district + c]);
  std::uint64_t sum = static_cast<std::uint64_t>(cr.balance_cents);
  const std::uint32_t next = a.at(&dt->d[d]).next_order;
  const std::uint32_t depth = std::min({cap, kReportOrders, next});
  const order_row* orders = rows<order_row>(tables[t_order]) + d * cap;
  for (std::uint32_t k = 1; k <= depth; ++k) {
    const order_row& o = a.at(&orders[(next - k) % cap]);
    if (o.customer != c || o.id == kEmpty) continue;
    for (std::uint32_t l = 0; l < o.line_count; ++l) sum += o.lines[l].amount_cents;
  }
  const std::uint32_t hn = dt->w.history_next;
  const std::uint32_t hdepth = std::min({size_.history, kReportOrders, hn});
  const history_row* hist = rows<history_row>(tables[t_history]);
  for (std::uint32_t k = 1; k <= hdepth; ++k) {
    const history_row& h = a.at(&hist[(hn - k) % size_.history]);
    if (h.customer == c && h.district == d) sum += static_cast<std::uint64_t>(h.amount_cents);
  }
  return sum;
}

// Order-status: a customer's last order and its lines.
std::uint64_t warehouse::order_status(accessor& a) {
  const std::uint32_t d = input_.below(kDistricts);
  const std::uint32_t c = input_.below(size_.customers_per_district);
  const std::uint32_t cap = size_.orders_per_district;
  const customer_row& cr = a.at(&rows<customer_row>(tables[t_customer])[d * size_.customers_per_district + c]);
  std::uint64_t sum = static_cast<std::uint64_t>(cr.balance_cents);
  if (cr.last_order == kEmpty) return sum;
  const order_row& o = a.at(&rows<order_row>(tables[t_order])[d * cap + cr.last_order % cap]);
  if (o.id != cr.last_order) return sum;  // overwritten by newer orders
  for (std::uint32_t l = 0; l < o.line_count; ++l) sum += o.lines[l].amount_cents + o.lines[l].quantity;
  return sum + o.carrier;
}

// Delivery: the oldest undelivered order of each district gets a carrier; its customer is
// charged the order's total.
std::uint64_t warehouse::delivery(accessor& a) {
  auto* dt = rows<district_table>(tables[t_district]);
  const std::uint32_t carrier = 1 + input_.below(10);
  const std::uint32_t cap = size_.orders_per_district;
  std::uint64_t delivered = 0;
  for (std::uint32_t d = 0; d < kDistricts; ++d) {
    district_row& dist = a.at(&dt->d[d]);
    if (dist.oldest_new_order == dist.next_order) continue;
    const std::uint32_t id = dist.oldest_new_order++;
    std::uint32_t& entry = a.at(&rows<std::uint32_t>(tables[t_new_order])[d * cap + id % cap]);
    if (entry != id) continue;
    entry = kEmpty;
    order_row& o = a.at(&rows<order_row>(tables[t_order])[d * cap + id % cap]);
    if (o.id != id) continue;
    o.carrier = carrier;
    std::int64_t total = 0;
    for (std::uint32_t l = 0; l < o.line_count; ++l) total += o.lines[l].amount_cents;
    customer_row& cr = a.at(&rows<customer_row>(tables[t_customer])[d * size_.customers_per_district + o.customer]);
    cr.balance_cents += total;
    ++cr.delivery_count;
    ++delivered;
  }
  return delivered;
}

// Stock-level: the stock of every item in the district's last 20 orders, counted when below a
// threshold.
std::uint64_t warehouse::stock_level(accessor& a) {
  auto* dt = rows<district_table>(tables[t_district]);
  const std::uint32_t d = input_.below(kDistricts);
  const auto threshold = static_cast<std::int32_t>(10 + input_.below(11));
  const std::uint32_t cap = size_.orders_per_district;
  const std::uint32_t next = a.at(&dt->d[d]).next_order;
  const std::uint32_t depth = std::min({cap, kStockLevelOrders, next});
  const order_row* orders = rows<order_row>(tables[t_order]) + d * cap;
  stock_row* stock = rows<stock_row>(tables[t_stock]);
  std::uint64_t low = 0;
  for (std::uint32_t k = 1; k <= depth; ++k) {
    const order_row& o = a.at(&orders[(next - k) % cap]);
    if (o.id == kEmpty) continue;
    for (std::uint32_t l = 0; l < o.line_count; ++l) {
      stock_row& s = a.at(&stock[o.lines[l].item]);
      if (std::atomic_ref<std::int32_t>(s.quantity).load(std::memory_order_relaxed) < threshold) ++low;
    }
  }
  return low;
}

// ---- workload ----

workload::workload(const options& o, rt::runtime& runtime) {
  machine_.nodes = runtime.nodes();
  machine_.virtual_topology = runtime.virtual_topology();
  machine_.emulate = machine_.virtual_topology && machine_.nodes > 1;
  machine_.local_cost = machine_.emulate ? o.local_cost : 0;
  machine_.remote_cost = machine_.emulate ? o.remote_cost : 0;
  machine_.topology = runtime.stats().topology;
  for (int a = 0; a < machine_.nodes; ++a)
    for (int b = 0; b < machine_.nodes; ++b) machine_.distance.push_back(runtime.node_distance(rt::node_id{a}, rt::node_id{b}));

  const int per_instance = o.warehouses > 0 ? o.warehouses : std::max(1, runtime.workers() / o.instances);
  const sizing size = sizing::from_kib(o.warehouse_kib);
  rng scatter(stream_seed(o.seed, -1, -1, 3));
  instances_.resize(static_cast<std::size_t>(o.instances));
  for (int i = 0; i < o.instances; ++i) {
    auto& whs = instances_[static_cast<std::size_t>(i)];
    for (int w = 0; w < per_instance; ++w) {
      auto wh = std::make_unique<warehouse>(i, w, size, o.seed);
      const int scatter_node = static_cast<int>(scatter.below(static_cast<std::uint32_t>(machine_.nodes)));
      for (int t = 0; t < kTables; ++t) {
        int node = 0;
        switch (o.place) {
          case placement::local: node = i * machine_.nodes / o.instances; break;
          case placement::interleave: node = (w + t) % machine_.nodes; break;
          case placement::scatter: node = scatter_node; break;
        }
        table& tb = wh->tables[static_cast<std::size_t>(t)];
        tb.bytes = size.bytes(t);
        tb.node = node;
        tb.base = runtime.numa_alloc(tb.bytes, rt::node_id{node});
      }
      wh->fill();
      whs.push_back(std::move(wh));
    }
    for (auto& wh : whs)
      for (auto& peer : whs)
        if (peer != wh) wh->peers.push_back(peer.get());
  }
}

workload::~workload() {
  for (auto& whs : instances_)
    for (auto& wh : whs)
      for (table& t : wh->tables) rt::numa_free(t.base);
}

// ---- measuring ----

void run_control::wait_chains() const {
  // Polls: the main thread is idle here, and a chain ends within one transaction (I-JBB-2).
  while (chains_left.load(std::memory_order_acquire) != 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

namespace {

struct snapshot {
  std::vector<std::uint64_t> completed, local, remote;  // per instance
  std::chrono::steady_clock::time_point at;
};

snapshot take(workload& w) {
  snapshot s;
  s.at = std::chrono::steady_clock::now();
  for (int i = 0; i < w.instances(); ++i) {
    std::uint64_t c = 0, l = 0, r = 0;
    for (int k = 0; k < w.warehouses_per_instance(); ++k) {
      const warehouse& wh = w.at(i, k);
      c += wh.completed.load(std::memory_order_relaxed);
      l += wh.local_chunks.load(std::memory_order_relaxed);
      r += wh.remote_chunks.load(std::memory_order_relaxed);
    }
    s.completed.push_back(c);
    s.local.push_back(l);
    s.remote.push_back(r);
  }
  return s;
}

double share(std::uint64_t local, std::uint64_t remote) {
  return local + remote == 0 ? 1.0 : static_cast<double>(local) / static_cast<double>(local + remote);
}
double seconds_between(const snapshot& a, const snapshot& b) {
  return std::chrono::duration<double>(b.at - a.at).count();
}

}  // namespace

run_result measure(workload& w, const options& o, run_control& ctl, const std::function<group_view(int)>& view,
                   std::ostream& progress) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  const auto warm_end = start + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(o.warmup_s));
  for (auto t = start + std::chrono::seconds(1); t < warm_end; t += std::chrono::seconds(1)) {
    std::this_thread::sleep_until(t);
    progress << "[warmup] t=" << std::chrono::duration<double>(t - start).count() << "s\n";
  }
  std::this_thread::sleep_until(warm_end);

  run_result r;
  const snapshot first = take(w);
  ctl.now.store(phase::measure, std::memory_order_release);
  const auto end = first.at + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(o.seconds));
  snapshot prev = first;
  for (auto t = first.at + std::chrono::seconds(1);; t += std::chrono::seconds(1)) {  // ends at `end`
    std::this_thread::sleep_until(std::min(t, end));
    const snapshot now = take(w);
    period p;
    p.t = seconds_between(first, now);
    std::uint64_t done = 0, loc = 0, rem = 0;
    for (int i = 0; i < w.instances(); ++i) {
      const auto k = static_cast<std::size_t>(i);
      p.local_share.push_back(share(now.local[k] - prev.local[k], now.remote[k] - prev.remote[k]));
      p.bops.push_back(static_cast<double>(now.completed[k] - prev.completed[k]) / seconds_between(prev, now));
      p.home.push_back(view(i).home);
      done += now.completed[k] - first.completed[k];
      loc += now.local[k] - first.local[k];
      rem += now.remote[k] - first.remote[k];
    }
    progress << "[measure] t=" << p.t
             << "s bops=" << static_cast<std::uint64_t>(static_cast<double>(done) / p.t) << " local_share=" << share(loc, rem)
             << '\n';
    r.periods.push_back(std::move(p));
    prev = now;
    if (t >= end) break;
  }
  const snapshot last = prev;
  ctl.now.store(phase::stop, std::memory_order_release);  // I-JBB-1
  ctl.wait_chains();

  r.seconds = seconds_between(first, last);
  r.instances.resize(static_cast<std::size_t>(w.instances()));
  std::array<histogram, kTxnTypes> per_type;
  for (int i = 0; i < w.instances(); ++i) {
    const auto k = static_cast<std::size_t>(i);
    instance_result& ir = r.instances[k];
    ir.bops = static_cast<double>(last.completed[k] - first.completed[k]) / r.seconds;
    ir.local = last.local[k] - first.local[k];
    ir.remote = last.remote[k] - first.remote[k];
    ir.local_share = share(ir.local, ir.remote);
    ir.view = view(i);
    ir.memory_bytes.assign(static_cast<std::size_t>(w.m().nodes), 0);
    histogram all;
    ir.warehouse_min = ~std::uint64_t{0};
    for (int h = 0; h < w.warehouses_per_instance(); ++h) {
      warehouse& wh = w.at(i, h);
      std::uint64_t n = 0;
      for (int t = 0; t < kTxnTypes; ++t) {
        all.merge(wh.latency[static_cast<std::size_t>(t)]);
        per_type[static_cast<std::size_t>(t)].merge(wh.latency[static_cast<std::size_t>(t)]);
        n += wh.latency[static_cast<std::size_t>(t)].count();
      }
      ir.warehouse_min = std::min(ir.warehouse_min, n);
      ir.warehouse_max = std::max(ir.warehouse_max, n);
      r.unknown_chunks += wh.unknown_chunks.load(std::memory_order_relaxed);
      for (const table& tb : wh.tables) {
        const int node = rt::node_of(tb.base).value;
        if (node >= 0 && node < w.m().nodes) ir.memory_bytes[static_cast<std::size_t>(node)] += tb.bytes;
      }
    }
    ir.all = summarize(all);
    r.bops_total += ir.bops;
  }
  for (int t = 0; t < kTxnTypes; ++t) r.per_type[static_cast<std::size_t>(t)] = summarize(per_type[static_cast<std::size_t>(t)]);
  return r;
}

}  // namespace jbb
