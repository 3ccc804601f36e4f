// The tuner <-> worker wire format: frames of a 4-byte little-endian length
// followed by that many bytes of JSON text, over a Unix stream socket
// (socketpair), one request/reply conversation per worker.
//
// Requests (tuner -> worker), by "type":
//   {"type":"task", "id":N, "task":{...task JSON...}, "reference":"/path/ref.bin"}
//       load the task's DAG and its reference data file; replies
//       {"type":"loaded","id":N} (N: the candidate whose build follows).
//   {"type":"build", "id":N, "steps":[...], "threads":T, "fault":"..."?,
//    "rtol":R, "atol":A}
//       replay + lower + compile; replies {"type":"built","id":N,"build_s":S}
//       (or an error reply), then runs the kernel once on the reference
//       inputs and replies {"type":"checked","id":N,"check_s":S,"once_s":S}
//       (or an error reply).
//   {"type":"time", "id":N, "repeat":R, "min_repeat_ms":M, "flush":B}
//       times the last checked kernel; replies {"type":"timed","id":N,
//       "costs_s":[...],"run_s":S}.
// Error reply: {"type":"error","id":N,"error":"invalid_schedule|build_error|
//   run_error|wrong_result","msg":"...","build_s":S?,"exit":B}; "exit": true
//   means the worker exits right after (its state may be damaged).
#pragma once

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

namespace loom::wire {

// Largest frame either side accepts (a corrupt length is an error, not an
// allocation).
constexpr size_t kMaxFrameBytes = 64u << 20;

// Encodes one frame (length prefix + JSON text).
std::string encode_frame(const nlohmann::json& msg);

// Blocking write of a whole frame; false when the peer is gone (no SIGPIPE).
bool write_frame(int fd, const nlohmann::json& msg);

// Blocking read of one frame (worker side). False on a clean EOF before a
// frame starts; throws LoomError on a truncated or malformed frame.
bool read_frame(int fd, nlohmann::json* msg);

// Incremental decoder (tuner side, non-blocking sockets): feed bytes as they
// arrive, pop complete messages.
class FrameDecoder {
 public:
  void feed(const char* data, size_t n) { buf_.append(data, n); }
  // True and sets *msg when a whole frame is buffered; throws LoomError on a
  // malformed frame.
  bool next(nlohmann::json* msg);
  void clear() { buf_.clear(); }

 private:
  std::string buf_;
};

}  // namespace loom::wire
