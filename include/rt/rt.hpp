// numart: a NUMA-aware work-stealing runtime. The one header users include.
#pragma once

#include "rt/config.hpp"
#include "rt/error.hpp"
#include "rt/group.hpp"
#include "rt/numa.hpp"
#include "rt/parallel_for.hpp"
#include "rt/runtime.hpp"
#include "rt/stats.hpp"
#include "rt/task.hpp"
#include "rt/task_group.hpp"
