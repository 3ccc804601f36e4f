// Messages between the ranks of a distributed tuning job: rank 0 runs the
// search, the cost model and the log (the coordinator, coordinator.h); every
// other rank is a measurement node (node.h). A message is bytes (a JSON
// text) from one rank to another; nothing here knows MPI (mpi_transport.cc
// does, and only it includes mpi.h).
#pragma once

#include <memory>
#include <string>

namespace loom {

class Transport {
 public:
  virtual ~Transport() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;  // ranks in the job
  virtual std::string host() const = 0;
  // Queues `bytes` for rank `to` and returns: a peer that is gone or not
  // receiving never blocks the sender. Safe from any thread.
  virtual void send(int to, const std::string& bytes) = 0;
  // Waits up to `wait_s` for a message from any rank; true and sets *from
  // and *bytes when one came. Safe from any thread.
  virtual bool receive(int* from, std::string* bytes, double wait_s) = 0;
  // A rank of the job is gone: ending must not wait for it (MPI_Finalize
  // waits for every rank, a dead one too, so the MPI transport then ends
  // without it).
  virtual void peer_lost() {}
};

// The job's ranks (MPI_COMM_WORLD), MPI initialised here and finalised when
// the transport is destroyed. Throws LoomError when this Loom was built
// without MPI (CMake found no MPI) or MPI cannot start.
std::unique_ptr<Transport> make_mpi_transport();
// Whether this Loom was built with MPI.
bool mpi_available();

}  // namespace loom
