// The trace ring: a fixed-size, single-producer ring of POD events (docs/design/trace.md).
//
// One ring per producer: a worker's ring is written by that worker only, the balancer's by the
// balancer thread only, the outside ring by whichever outside thread holds the recorder's lock.
// Readers (the Chrome trace dump) may run at any time, concurrently with the producer: they copy
// the ring and discard what the producer overwrote during the copy (a seqlock over the whole
// ring, I-TRACE-1..4). When the ring is full the producer overwrites the oldest event; the
// events lost that way are counted from the totals, not by the producer (I-TRACE-5).
//
// Cost for the producer: five relaxed stores of the event, one relaxed store of `claimed_`, a
// release fence (a compiler barrier on x86) and a release store of `published_` (a plain store
// on x86). No read-modify-write, no shared cache line with any other producer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "sync/atomics.hpp"

namespace rt::trace {

// What an event records. The meaning of the fields a..g per kind is in events.hpp (builders)
// and in docs/observability.md.
enum class kind : std::uint8_t {
  task_start = 1,
  task_end,
  spawn,
  steal,
  park,
  unpark,
  mailbox_handoff,
  balancer_move,
  page_migration,
};

// 40 bytes, no padding (every byte is a field, so copying it word by word reads no
// indeterminate bytes).
struct event {
  std::uint64_t ts = 0;  // CLOCK_MONOTONIC nanoseconds
  std::uint64_t a = 0;
  std::uint64_t b = 0;
  std::int32_t c = 0;
  std::int32_t d = 0;
  std::int32_t g = 0;
  kind what = kind::task_start;
  std::uint8_t e = 0;
  std::uint16_t f = 0;
};
static_assert(std::is_trivially_copyable_v<event>, "events are copied word by word");
static_assert(sizeof(event) == 40, "event must have no padding");
static_assert(sizeof(event) % sizeof(std::uint64_t) == 0, "event is copied as 64-bit words");

class ring {
 public:
  // Capacity: `min_events` rounded up to a power of two; at least 2.
  explicit ring(std::size_t min_events) {
    if (min_events == 0 || min_events > kMaxEvents) {
      throw std::invalid_argument("trace ring: capacity must be between 1 and " + std::to_string(kMaxEvents) +
                                  " events, not " + std::to_string(min_events));
    }
    std::size_t cap = 2;
    while (cap < min_events) cap <<= 1;
    mask_ = cap - 1;
    slots_ = std::make_unique<slot[]>(cap);
  }
  ring(const ring&) = delete;
  ring& operator=(const ring&) = delete;

  static constexpr std::size_t kMaxEvents = std::size_t{1} << 26;

  std::size_t capacity() const noexcept { return mask_ + 1; }

  // Producer only. Overwrites the oldest event when the ring is full.
  void push(const event& ev) noexcept {
    const std::uint64_t n = published_.load(S::relaxed);  // the producer's own counter
    // I-TRACE-1: announce the overwrite of slot n & mask before touching it. The release fence
    // orders this store before the word stores below; it pairs with the reader's acquire fence
    // (I-TRACE-3).
    claimed_.store(n + 1, S::relaxed);
    S::fence(S::release);
    std::uint64_t words[kWords];
    std::memcpy(words, &ev, sizeof ev);
    slot& s = slots_[n & mask_];
    for (std::size_t i = 0; i < kWords; ++i) s.w[i].store(words[i], S::relaxed);
    // I-TRACE-2: publish event n; pairs with the reader's acquire load of published_.
    published_.store(n + 1, S::release);
  }

  struct snapshot {
    std::vector<event> events;  // oldest first
    std::uint64_t written = 0;  // events the producer ever pushed (at the start of the copy)
    std::uint64_t dropped = 0;  // written - events.size(): overwritten before or during the copy
  };

  // Any thread, any time (I-TRACE-4). Lock-free and wait-free for the producer; the reader
  // never blocks it.
  snapshot read() const {
    snapshot out;
    // I-TRACE-2: every event below `end` is fully written (acquire pairs with push's release).
    const std::uint64_t end = published_.load(S::acquire);
    const std::uint64_t cap = capacity();
    const std::uint64_t begin = end > cap ? end - cap : 0;
    std::vector<std::uint64_t> copy(static_cast<std::size_t>(end - begin) * kWords);
    for (std::uint64_t n = begin; n < end; ++n) {
      const slot& s = slots_[n & mask_];
      for (std::size_t i = 0; i < kWords; ++i) copy[static_cast<std::size_t>(n - begin) * kWords + i] = s.w[i].load(S::relaxed);
    }
    // I-TRACE-3: if any word copied above was written by a later push (an overwrite), that
    // push's release fence synchronizes with this acquire fence, so its claimed_ store is
    // visible below: every event older than claimed - capacity may be torn and is discarded.
    S::fence(S::acquire);
    const std::uint64_t claimed = claimed_.load(S::relaxed);
    const std::uint64_t valid_from = claimed > cap ? claimed - cap : 0;
    const std::uint64_t first = valid_from > begin ? valid_from : begin;
    out.written = end;
    if (first < end) {
      out.events.resize(static_cast<std::size_t>(end - first));
      std::memcpy(static_cast<void*>(out.events.data()), copy.data() + static_cast<std::size_t>(first - begin) * kWords,
                  out.events.size() * sizeof(event));
    }
    out.dropped = end - out.events.size();
    return out;
  }

 private:
  using S = sync::native;
  static constexpr std::size_t kWords = sizeof(event) / sizeof(std::uint64_t);
  // Written by the producer only (relaxed), read by snapshots (relaxed): a torn event is never
  // returned because of I-TRACE-3, whatever the reader saw here.
  struct slot {
    S::atomic<std::uint64_t> w[kWords];
  };

  std::size_t mask_ = 0;
  std::unique_ptr<slot[]> slots_;
  // claimed_: 1 + the index of the last event whose slot the producer started to write.
  // Written by the producer (relaxed, then a release fence: I-TRACE-1); read by snapshots after
  // their acquire fence (I-TRACE-3).
  alignas(sync::kCacheLine) S::atomic<std::uint64_t> claimed_{0};
  // published_: the number of events fully written. Written by the producer (release,
  // I-TRACE-2), read by the producer itself (relaxed) and by snapshots (acquire).
  S::atomic<std::uint64_t> published_{0};
};

}  // namespace rt::trace
