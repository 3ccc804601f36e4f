// Test support for graph/: small graphs written as a list of nodes, and the
// error text of a call that should fail.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "graph/graph.h"
#include "graph/interpreter.h"
#include "ir/error.h"

namespace loom::graph::testing {

// Builds a Graph; each node is named after the value it produces.
class GraphBuilder {
 public:
  GraphBuilder& input(const std::string& name, const Shape& shape) {
    g_.inputs.push_back({name, shape});
    return *this;
  }
  GraphBuilder& constant(const std::string& name, const Shape& shape, std::vector<float> data) {
    g_.constants[name] = Constant{shape, std::move(data)};
    return *this;
  }
  // A constant filled with a deterministic, not too regular sequence.
  GraphBuilder& pattern_constant(const std::string& name, const Shape& shape, uint32_t seed = 1) {
    return constant(name, shape, pattern_values(num_elements(shape), seed));
  }
  GraphBuilder& node(const std::string& op, std::vector<std::string> inputs, const std::string& output,
                     nlohmann::json attrs = nlohmann::json::object()) {
    Node n;
    n.name = output;
    n.op = op;
    n.inputs = std::move(inputs);
    n.output = output;
    n.attrs = std::move(attrs);
    g_.nodes.push_back(std::move(n));
    return *this;
  }
  // The graph, not validated.
  Graph raw(std::vector<std::string> outputs) const {
    Graph g = g_;
    g.outputs = std::move(outputs);
    return g;
  }
  // The graph, validated.
  Graph build(std::vector<std::string> outputs) const {
    Graph g = raw(std::move(outputs));
    g.validate();
    return g;
  }

  // Values in [-1, 1) from a small linear congruential generator.
  static std::vector<float> pattern_values(int64_t n, uint32_t seed) {
    std::vector<float> v(n);
    uint32_t s = seed * 2654435761u + 12345u;
    for (auto& x : v) {
      s = s * 1664525u + 1013904223u;
      x = static_cast<float>((s >> 8) & 0xffff) / 32768.0f - 1.0f;
    }
    return v;
  }

 private:
  Graph g_;
};

// The message of the LoomError `f` throws; "" (and a test failure) if it
// throws none.
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const LoomError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a LoomError";
  return "";
}

inline bool one_line(const std::string& s) { return !s.empty() && s.find('\n') == std::string::npos; }

}  // namespace loom::graph::testing
