// The sched-domain levels between two workers and each level's imbalance_pct.
//
// The kernel builds a hierarchy of scheduling domains (SMT siblings, the LLC, then package and
// NUMA levels) and sd_init() gives each level an imbalance_pct: the load ratio it tolerates
// before it calls the groups imbalanced (110 for SMT, 117 for the LLC, 125 for every wider
// domain in the seeds' kernels). numart has no domain tree: the smallest domain that spans two
// workers follows from their places in the layout, and the percentages are tunables rows
// (imbalance_pct_smt, imbalance_pct_llc, imbalance_pct_numa). Pure.
#pragma once

#include <cstdint>

#include "policy/layout.hpp"
#include "tunables/tunables.hpp"

namespace rt::policy {

// Percent scale of imbalance_pct (the kernel's "100 * a <= imbalance_pct * b").
inline constexpr std::uint64_t kPercentScale = 100;

enum class domain_level : std::uint8_t {
  smt,   // both workers on one core (only in oversubscribed layouts: a worker owns a core)
  llc,   // one last-level cache
  numa,  // anything wider: other LLCs of the package, other nodes
};

const char* to_string(domain_level d);

// The smallest domain that spans workers a and b (a == b gives smt).
domain_level domain_between(const layout& l, int a, int b);

// The level's imbalance_pct from the tunables, never below kPercentScale (a ratio under 100%
// would call a perfectly balanced pair imbalanced; the tunables range already forbids it).
std::uint64_t imbalance_pct(domain_level d, const tun::settings& s);

// imbalance_pct(domain_between(l, a, b), s).
std::uint64_t imbalance_pct_between(const layout& l, int a, int b, const tun::settings& s);

// 100 + (imbalance_pct - 100) / 2: the half-way margin numa_wake_affine() (000 patch 7) and
// find_idlest_group() give the side they would rather keep.
std::uint64_t half_imbalance_scale(std::uint64_t pct);

}  // namespace rt::policy
