// Building blocks for hand-written loop nests in the backend tests: buffers,
// a lowered function around a body, a one-index load.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ir/stmt.h"

namespace loom::loop_nest {

inline Buffer buf(const std::string& name, std::vector<int64_t> shape,
                  BufferScope scope = BufferScope::kGlobal) {
  return Buffer{name, std::move(shape), scope};
}

inline LoweredFunc func(const std::string& name, std::vector<Buffer> args, Stmt body,
                        std::vector<Buffer> temps = {}) {
  LoweredFunc f;
  f.name = name;
  f.args = std::move(args);
  f.temps = std::move(temps);
  f.body = std::move(body);
  return f;
}

inline Expr ld(const std::string& b, Expr index) { return load(b, {std::move(index)}); }

}  // namespace loom::loop_nest
