// The Transport over MPI_COMM_WORLD. Only this file includes mpi.h; it is
// compiled when CMake finds MPI (LOOM_HAVE_MPI), into the loom executable
// only.
#include "measure/distributed/transport.h"

#include "ir/error.h"

#ifdef LOOM_HAVE_MPI

// The C API only (Open MPI would otherwise pull in its deprecated C++ bindings).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <list>
#include <mutex>
#include <thread>

namespace loom {

namespace {

constexpr int kTag = 7;

class MpiTransport : public Transport {
 public:
  MpiTransport() {
    int provided = 0;
    // Calls come from two threads (the coordinator's heartbeat), never at
    // once: the mutex serialises them.
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS)
      throw LoomError("--distributed: MPI_Init_thread failed");
    if (provided < MPI_THREAD_SERIALIZED) {
      MPI_Finalize();
      throw LoomError("--distributed: this MPI does not allow calls from more than one thread");
    }
    // A rank that dies is an error to report, not the end of this process.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    char name[MPI_MAX_PROCESSOR_NAME];
    int len = 0;
    MPI_Get_processor_name(name, &len);
    host_.assign(name, static_cast<size_t>(len));
  }
  ~MpiTransport() override {
    std::lock_guard<std::mutex> lock(mu_);
    // Open MPI's finalize can wait forever for a rank that died; mpirun
    // (--enable-recovery) ends the job cleanly when the others exit without it.
    if (peer_lost_) return;
    progress_sends();
    // Sends to a rank that died can never complete; MPI may drop them.
    for (auto& s : sends_) MPI_Request_free(&s.request);
    MPI_Finalize();
  }
  void peer_lost() override { peer_lost_ = true; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string host() const override { return host_; }

  void send(int to, const std::string& bytes) override {
    std::lock_guard<std::mutex> lock(mu_);
    progress_sends();
    sends_.push_back({bytes, MPI_REQUEST_NULL});
    Pending& s = sends_.back();
    if (MPI_Isend(s.bytes.data(), static_cast<int>(s.bytes.size()), MPI_CHAR, to, kTag, MPI_COMM_WORLD,
                  &s.request) != MPI_SUCCESS)
      sends_.pop_back();  // a peer that is gone: the message is lost, as it would be on the wire
  }

  bool receive(int* from, std::string* bytes, double wait_s) override {
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_s);
    for (;;) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        progress_sends();
        int flag = 0;
        MPI_Status st;
        if (MPI_Iprobe(MPI_ANY_SOURCE, kTag, MPI_COMM_WORLD, &flag, &st) == MPI_SUCCESS && flag) {
          int count = 0;
          MPI_Get_count(&st, MPI_CHAR, &count);
          bytes->assign(static_cast<size_t>(count), '\0');
          if (MPI_Recv(bytes->data(), count, MPI_CHAR, st.MPI_SOURCE, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE) ==
              MPI_SUCCESS) {
            *from = st.MPI_SOURCE;
            return true;
          }
        }
      }
      if (std::chrono::steady_clock::now() >= end) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

 private:
  struct Pending {
    std::string bytes;  // alive until the send completes
    MPI_Request request;
  };
  // Drops the sends that completed (or failed). Called with mu_ held.
  void progress_sends() {
    for (auto it = sends_.begin(); it != sends_.end();) {
      int done = 0;
      if (MPI_Test(&it->request, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS || done) it = sends_.erase(it);
      else ++it;
    }
  }

  int rank_ = 0, size_ = 1;
  std::atomic<bool> peer_lost_{false};
  std::string host_;
  std::mutex mu_;
  std::list<Pending> sends_;
};

}  // namespace

std::unique_ptr<Transport> make_mpi_transport() { return std::make_unique<MpiTransport>(); }
bool mpi_available() { return true; }

}  // namespace loom

#else

namespace loom {

std::unique_ptr<Transport> make_mpi_transport() {
  throw LoomError("--distributed: this loom was built without MPI (install libopenmpi-dev and configure again)");
}
bool mpi_available() { return false; }

}  // namespace loom

#endif
