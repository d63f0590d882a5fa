// Runs a check in a fork()ed child and collects its verdict, with a kill timer: a child that is
// still running when the time is up is killed (SIGKILL) and reported as hung, so a runtime that
// deadlocks after fork() fails the test instead of hanging it.
//
// The child runs `body(report&)`: the body records failed expectations in the report. The child
// then writes the report into a pipe and leaves with std::exit (0 when nothing failed, 1
// otherwise): a normal exit, static destructors included, like a real program's child.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <string>
#include <utility>

#include "rt/rt.hpp"

namespace fork_test {

// The child's list of failed expectations.
class report {
 public:
  void fail(const std::string& what) { text_ += what + "\n"; }
  void check(bool ok, const std::string& what) {
    if (!ok) fail(what);
  }
  bool ok() const { return text_.empty(); }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

// Expects `f` to throw rt::runtime_stopped whose what() mentions fork (the child must not use a
// runtime it inherited). Anything else is recorded.
template <class F>
void expect_refused_after_fork(report& r, const std::string& what, F&& f) {
  try {
    f();
    r.fail(what + ": returned normally; expected rt::runtime_stopped mentioning fork");
  } catch (const rt::runtime_stopped& e) {
    if (std::string(e.what()).find("fork") == std::string::npos)
      r.fail(what + ": rt::runtime_stopped does not mention fork: " + e.what());
  } catch (const std::exception& e) {
    r.fail(what + ": threw something other than rt::runtime_stopped: " + e.what());
  }
}

struct child {
  pid_t pid = -1;
  int report_fd = -1;  // read end of the child's report pipe
};

struct outcome {
  bool hung = false;    // still running at the deadline: killed
  int wait_status = 0;  // from waitpid
  std::string report;   // what the child wrote (its failed expectations, or why it died)

  bool exited_cleanly() const { return !hung && WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0; }
  std::string describe() const {
    std::string s;
    if (hung) {
      s = "child hung: still running after the kill timer, killed with SIGKILL";
    } else if (WIFEXITED(wait_status)) {
      s = "child exited with status " + std::to_string(WEXITSTATUS(wait_status));
    } else if (WIFSIGNALED(wait_status)) {
      s = "child was killed by signal " + std::to_string(WTERMSIG(wait_status));
    }
    return report.empty() ? s : s + "; its report:\n" + report;
  }
};

namespace detail {
inline void write_all(int fd, const std::string& s) {
  std::size_t off = 0;
  while (off < s.size()) {
    const ssize_t w = ::write(fd, s.data() + off, s.size() - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    off += static_cast<std::size_t>(w);
  }
}

// Reads what is available without blocking; false at end of file.
inline bool drain(int fd, std::string& into) {
  char chunk[4096];
  for (;;) {
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n > 0) {
      into.append(chunk, static_cast<std::size_t>(n));
      continue;
    }
    if (n == 0) return false;
    if (errno == EINTR) continue;
    return true;  // EAGAIN: nothing more for now
  }
}
}  // namespace detail

// Forks from the calling thread (an outside thread or a worker running a task). In the child,
// runs `body` and exits; in the parent, returns the child to hand to await_child().
template <class Body>
child start_child(Body&& body) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
  std::fflush(nullptr);  // nothing buffered before the fork is written twice
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error("fork failed");
  }
  if (pid == 0) {
    ::close(fds[0]);
    report r;
    try {
      body(r);
    } catch (const std::exception& e) {
      r.fail(std::string("the child's checks threw: ") + e.what());
    } catch (...) {
      r.fail("the child's checks threw a non-std exception");
    }
    detail::write_all(fds[1], r.text());
    ::close(fds[1]);
    std::exit(r.ok() ? 0 : 1);
  }
  ::close(fds[1]);
  if (::fcntl(fds[0], F_SETFL, O_NONBLOCK) != 0) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    ::close(fds[0]);
    throw std::runtime_error("fcntl(O_NONBLOCK) failed");
  }
  return child{pid, fds[0]};
}

// Forks from the calling thread. The child returns at once with nothing else done (`c` left
// empty; what happens next is up to its caller; its report is empty); the parent returns with
// the child in `c`.
inline void fork_and_return(child& c) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) throw std::runtime_error("pipe2 failed");
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error("fork failed");
  }
  if (pid == 0) {
    ::close(fds[0]);
    return;  // the write end closes when the child exits
  }
  ::close(fds[1]);
  c = child{pid, fds[0]};
}

// Waits for the child until `limit` has passed, then kills it. Always reaps it.
inline outcome await_child(const child& c, std::chrono::milliseconds limit = std::chrono::seconds(30)) {
  outcome out;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  bool open = true;
  for (;;) {
    if (open) open = detail::drain(c.report_fd, out.report);
    const pid_t done = ::waitpid(c.pid, &out.wait_status, WNOHANG);
    if (done == c.pid) break;
    if (done < 0 && errno != EINTR) throw std::runtime_error("waitpid failed");
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(c.pid, SIGKILL);
      while (::waitpid(c.pid, &out.wait_status, 0) < 0 && errno == EINTR) {
      }
      out.hung = true;
      break;
    }
    pollfd p{c.report_fd, POLLIN, 0};
    ::poll(open ? &p : nullptr, open ? 1 : 0, 10);  // a report chunk or 10 ms, whichever first
  }
  if (open) detail::drain(c.report_fd, out.report);  // the rest: the writer is gone now
  ::close(c.report_fd);
  return out;
}

}  // namespace fork_test
