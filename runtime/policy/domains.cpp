#include "policy/domains.hpp"

#include <algorithm>

namespace rt::policy {

const char* to_string(domain_level d) {
  switch (d) {
    case domain_level::smt:
      return "smt";
    case domain_level::llc:
      return "llc";
    case domain_level::numa:
      return "numa";
  }
  return "?";
}

domain_level domain_between(const layout& l, int a, int b) {
  const worker_place& pa = l.workers[static_cast<std::size_t>(a)];
  const worker_place& pb = l.workers[static_cast<std::size_t>(b)];
  if (pa.core == pb.core) return domain_level::smt;
  if (pa.llc == pb.llc) return domain_level::llc;
  return domain_level::numa;
}

std::uint64_t imbalance_pct(domain_level d, const tun::settings& s) {
  std::int64_t pct = s.t.imbalance_pct_numa;
  switch (d) {
    case domain_level::smt:
      pct = s.t.imbalance_pct_smt;
      break;
    case domain_level::llc:
      pct = s.t.imbalance_pct_llc;
      break;
    case domain_level::numa:
      break;
  }
  return std::max(static_cast<std::uint64_t>(std::max<std::int64_t>(pct, 0)), kPercentScale);
}

std::uint64_t imbalance_pct_between(const layout& l, int a, int b, const tun::settings& s) {
  return imbalance_pct(domain_between(l, a, b), s);
}

std::uint64_t half_imbalance_scale(std::uint64_t pct) {
  return kPercentScale + (std::max(pct, kPercentScale) - kPercentScale) / 2;
}

}  // namespace rt::policy
