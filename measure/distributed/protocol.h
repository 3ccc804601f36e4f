// The coordinator <-> node messages of a distributed tuning job, JSON texts
// by "type":
//   node -> 0: {"type":"hello", "machine":{MachineKind}, "host":"..."}
//   0 -> node: {"type":"setup", "measure":{measure options}}
//   0 -> node: {"type":"work", "id":W, "task":{task}, "steps":[[...],...],
//               "best_s":S}   measure these candidates (best_s: the best cost
//               known for the task, for the slow cutoff; 0 = none)
//   node -> 0: {"type":"done", "id":W, "results":[{result},...]}
//   node -> 0: {"type":"failed", "id":W, "error":"one line"}  the node could
//               not measure the task at all (e.g. it does not fit its memory)
//   both ways: {"type":"alive"}   every heartbeat_s; any message proves the
//               sender alive
//   0 -> node: {"type":"quit", "peer_lost":B}   B: a node was lost, so the
//               job ends without MPI_Finalize (transport.h)
#pragma once

#include <algorithm>

namespace loom::distributed {

// How often each side says it is alive, for a given node timeout: five
// heartbeats fit in the timeout, so one late message is no loss.
inline double heartbeat_s(double node_timeout_s) { return std::max(0.05, node_timeout_s / 5); }

// How long a node waits for the coordinator's setup: rank 0 may first
// import a model and build its tasks.
inline constexpr double kSetupWaitS = 600;

}  // namespace loom::distributed
