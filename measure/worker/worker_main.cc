// loom_worker: a measurement worker process (see measure/measurer.h and the
// protocol in measure/protocol.h). Started by the tuner with its socket as
// fd 3 (`--fd=N` to change); exits on EOF. Not meant to be run by hand.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "measure/protocol.h"
#include "measure/worker/worker_session.h"

int main(int argc, char** argv) {
  int fd = 3;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--fd=", 5) == 0) {
      fd = std::atoi(argv[i] + 5);
    } else {
      std::fprintf(stderr, "loom_worker: unknown argument '%s' (this program is started by the tuner)\n", argv[i]);
      return 2;
    }
  }
  loom::WorkerSession session;
  auto reply = [fd](const nlohmann::json& m) {
    if (!loom::wire::write_frame(fd, m)) std::_Exit(0);  // the tuner is gone
  };
  while (true) {
    nlohmann::json req;
    try {
      if (!loom::wire::read_frame(fd, &req)) return 0;  // EOF: the tuner closed the socket
    } catch (const std::exception& e) {
      std::fprintf(stderr, "loom_worker: %s\n", e.what());
      return 1;
    }
    bool keep_going = true;
    try {
      keep_going = session.handle(req, reply);
    } catch (const std::exception& e) {
      // A failure outside the candidate's own code (e.g. a bad task or
      // reference file): report it against the current request and exit.
      reply({{"type", "error"}, {"id", req.value("id", -1)}, {"error", "build_error"},
             {"msg", std::string("worker: ") + e.what()}, {"exit", true}});
      return 1;
    }
    if (!keep_going) return 0;
  }
}
