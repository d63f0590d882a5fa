#include "sync/asym_fence.hpp"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>


#include "core/assert.hpp"

namespace rt::sync {

namespace {
long membarrier(int cmd) noexcept { return syscall(SYS_membarrier, cmd, 0, 0); }
}  // namespace

bool asym_fence::available() noexcept {
#if defined(RT_TSAN)
  return false;
#else
  static const bool ok = [] {
    const long cmds = membarrier(MEMBARRIER_CMD_QUERY);
    if (cmds < 0 || (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return false;
    return membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
  }();
  return ok;
#endif
}

void asym_fence::heavy() noexcept {
  // Registered in available(); the only documented failures are EINVAL/EPERM for an
  // unregistered or unsupported command, which available() ruled out.
  const long r = membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED);
  RT_ASSERT(r == 0, "I-PARK-7", "membarrier(PRIVATE_EXPEDITED) failed after registration");
}

}  // namespace rt::sync
