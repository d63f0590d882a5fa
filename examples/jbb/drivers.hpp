// The two drivers of numart_jbb: each starts one chain of transaction tasks per warehouse on
// its runtime, lets jbb::measure() time the run, and stops the chains.
#pragma once

#include <iosfwd>

#include "workload.hpp"

namespace rt {
class runtime;
}

namespace jbb {

// Instances are rt::groups, warehouses member groups of their instance; each table is a
// registered region of its warehouse's group, so the balancer can sample and move them.
run_result run_numart(workload& w, const options& o, rt::runtime& runtime, std::ostream& progress);

// The same chains on oneTBB (tbb::task_arena::enqueue), in one arena of runtime.workers()
// threads or in one arena per node (o.arenas). `runtime` gives the number of workers per node.
run_result run_onetbb(workload& w, const options& o, rt::runtime& runtime, std::ostream& progress);

// Whether the NUMA_BALANCING feature is on in `runtime` (from runtime.describe()).
bool balancing_on(const rt::runtime& runtime);

}  // namespace jbb
