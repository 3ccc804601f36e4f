#include "measure/protocol.h"

#include <cerrno>
#include <cstdint>
#include <sys/socket.h>
#include <unistd.h>

#include "ir/error.h"

namespace loom::wire {

namespace {

uint32_t decode_length(const unsigned char* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

nlohmann::json parse_payload(const char* data, size_t n) {
  try {
    return nlohmann::json::parse(data, data + n);
  } catch (const nlohmann::json::exception& e) {
    throw LoomError(std::string("malformed frame from peer: ") + e.what());
  }
}

}  // namespace

std::string encode_frame(const nlohmann::json& msg) {
  std::string text = msg.dump();
  if (text.size() > kMaxFrameBytes) throw LoomError("frame too large: " + std::to_string(text.size()) + " bytes");
  uint32_t n = static_cast<uint32_t>(text.size());
  std::string out(4, '\0');
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out + text;
}

bool write_frame(int fd, const nlohmann::json& msg) {
  std::string frame = encode_frame(msg);
  size_t done = 0;
  while (done < frame.size()) {
    ssize_t w = ::send(fd, frame.data() + done, frame.size() - done, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && errno == ENOTSOCK) w = ::write(fd, frame.data() + done, frame.size() - done);
    if (w <= 0) return false;
    done += static_cast<size_t>(w);
  }
  return true;
}

bool read_frame(int fd, nlohmann::json* msg) {
  auto read_all = [fd](char* p, size_t n) -> size_t {
    size_t got = 0;
    while (got < n) {
      ssize_t r = ::read(fd, p + got, n - got);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) break;
      got += static_cast<size_t>(r);
    }
    return got;
  };
  unsigned char len[4];
  size_t got = read_all(reinterpret_cast<char*>(len), 4);
  if (got == 0) return false;
  if (got < 4) throw LoomError("truncated frame header");
  uint32_t n = decode_length(len);
  if (n > kMaxFrameBytes) throw LoomError("frame length " + std::to_string(n) + " exceeds the limit");
  std::string payload(n, '\0');
  if (read_all(payload.data(), n) < n) throw LoomError("truncated frame");
  *msg = parse_payload(payload.data(), n);
  return true;
}

bool FrameDecoder::next(nlohmann::json* msg) {
  if (buf_.size() < 4) return false;
  uint32_t n = decode_length(reinterpret_cast<const unsigned char*>(buf_.data()));
  if (n > kMaxFrameBytes) throw LoomError("frame length " + std::to_string(n) + " exceeds the limit");
  if (buf_.size() < 4 + size_t(n)) return false;
  *msg = parse_payload(buf_.data() + 4, n);
  buf_.erase(0, 4 + size_t(n));
  return true;
}

}  // namespace loom::wire
