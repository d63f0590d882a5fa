// Saturating integer arithmetic for load and utilisation bookkeeping.
//
// The kernel discounts a task's contribution from a CPU's load with
// `var -= min(var, val)` and, since seed 003 patch 3/3, spells it lsub_positive() ("remove
// and clamp on negative, from a local variable"). Underflowing an unsigned load instead turns
// a nearly idle worker into the busiest one in the machine; DESIGN.md §1 asks the wake path
// to saturate wherever the seed subtracts task_load from prev_load.
#pragma once

#include <concepts>
#include <limits>
#include <type_traits>

namespace rt::core {

template <class T>
concept sat_integer = std::integral<T> && !std::same_as<std::remove_cv_t<T>, bool>;

// a - b when a > b, else 0; the result is never negative. For signed T, a - b above the
// maximum (a large, b negative) saturates at the maximum instead of overflowing.
template <sat_integer T>
constexpr T sub_positive(T a, std::type_identity_t<T> b) noexcept {
  if (!(a > b)) return T{0};
  if constexpr (std::is_signed_v<T>) {
    if (b < 0 && a > std::numeric_limits<T>::max() + b) return std::numeric_limits<T>::max();
  }
  return static_cast<T>(a - b);
}

// a = sub_positive(a, b), the kernel's lsub_positive(&a, b).
template <sat_integer T>
constexpr void lsub_positive(T& a, std::type_identity_t<T> b) noexcept {
  a = sub_positive(a, b);
}

// a + b clamped to [min, max] of T instead of wrapping or overflowing.
template <sat_integer T>
constexpr T sat_add(T a, std::type_identity_t<T> b) noexcept {
  if constexpr (std::is_unsigned_v<T>) {
    return a > std::numeric_limits<T>::max() - b ? std::numeric_limits<T>::max() : static_cast<T>(a + b);
  } else {
    if (b > 0 && a > std::numeric_limits<T>::max() - b) return std::numeric_limits<T>::max();
    if (b < 0 && a < std::numeric_limits<T>::min() - b) return std::numeric_limits<T>::min();
    return static_cast<T>(a + b);
  }
}

// a * b clamped to the maximum of an unsigned T instead of wrapping (policy arithmetic on
// loads and capacities scaled by percentages).
template <sat_integer T>
  requires std::is_unsigned_v<T>
constexpr T sat_mul(T a, std::type_identity_t<T> b) noexcept {
  return b != 0 && a > std::numeric_limits<T>::max() / b ? std::numeric_limits<T>::max() : static_cast<T>(a * b);
}

}  // namespace rt::core
