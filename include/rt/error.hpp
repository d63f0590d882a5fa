// Exceptions thrown by numart's public API.
#pragma once

#include <stdexcept>

namespace rt {

// Bad configuration: RT_TUNE, RT_WORKERS, RT_TOPOLOGY, rt::config fields, topology input.
// what() is one line that names the offending input and the reason.
class config_error : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// rt::spawn (or a group/task_group spawn) on a runtime that is shutting down or stopped.
class runtime_stopped : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The runtime could not start (thread creation failed, ...). Nothing is leaked.
class startup_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace rt
