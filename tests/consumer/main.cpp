// Built against the installed package; prints "consumer ok <value>" when spawn/join works.
#include <cstdio>

#include <rt/rt.hpp>

int main() {
  rt::config c;
  c.workers = 2;
  rt::runtime r{c};
  rt::task_group g{r};
  long sum = 0;
  auto h = r.spawn([] { return 40; });
  g.spawn([&sum] { sum += 2; });
  g.wait();
  std::printf("consumer ok %ld\n", h.join() + sum);
  return h.valid() ? 1 : 0;
}
