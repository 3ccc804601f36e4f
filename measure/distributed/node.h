// A measurement node of a distributed tuning job (a rank other than 0): it
// says hello with its machine kind, takes the job's measure options, then
// measures each share of a batch that rank 0 deals it with its own worker
// processes (measure/measurer.h: builds in parallel, one timing at a time
// on this machine, every program checked against the reference it computes
// itself), saying it is alive every heartbeat meanwhile.
#pragma once

#include <functional>
#include <string>

#include "measure/distributed/transport.h"

namespace loom {

// Returns 0 when rank 0 says quit, 1 when rank 0 is silent for the node
// timeout (it is gone). `print` gets one line per event worth a log line.
//
// TEST ONLY: $LOOM_TEST_NODE_FAULT ("2:die_after=1,3:silent_after=0") makes
// rank R, when dealt work after completing N shares, die at once (SIGKILL)
// or fall silent (it ignores work and sends nothing until quit).
int run_measurement_node(Transport& t, const std::function<void(const std::string&)>& print);

}  // namespace loom
