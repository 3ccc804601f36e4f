// Helpers for the LLVM backend tests: hand-built loop nests, random buffers,
// and a comparison with the C backend (the oracle) on the same program.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "codegen/c/compile.h"
#include "codegen/c/source.h"
#include "codegen/llvm/llvm_jit.h"
#include "ir/stmt.h"
#include "tests/support/loop_nest.h"

namespace loom::llvm_test {

using loop_nest::buf;
using loop_nest::func;
using loop_nest::ld;

// One random array per argument of f (same seed -> same data).
inline std::vector<std::vector<float>> random_args(const LoweredFunc& f, uint32_t seed = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<std::vector<float>> data;
  for (const auto& b : f.args) {
    std::vector<float> v(b.size());
    for (auto& x : v) x = dist(rng);
    data.push_back(std::move(v));
  }
  return data;
}

inline std::vector<float*> ptrs(std::vector<std::vector<float>>& data) {
  std::vector<float*> p;
  for (auto& v : data) p.push_back(v.data());
  return p;
}

// Runs f with the LLVM backend and with the C backend on the same random
// inputs; every argument buffer must match afterwards.
inline void expect_matches_c(const LoweredFunc& f, const LLVMCompileOptions& opts = {},
                             float tol = 1e-5f) {
  auto kernel = compile_llvm(f, opts);
  auto c = CompiledCModule::from_func(f);
  auto a = random_args(f), b = random_args(f);
  (*kernel)(ptrs(a));
  c.run(ptrs(b));
  for (size_t i = 0; i < a.size(); ++i) {
    for (size_t k = 0; k < a[i].size(); ++k) {
      float x = a[i][k], y = b[i][k];
      if (std::isnan(x) && std::isnan(y)) continue;
      ASSERT_NEAR(x, y, tol * (1.f + std::fabs(y)))
          << f.args[i].name << "[" << k << "] in " << f.name;
    }
  }
}

// The JIT (which applies the passes) and the vector C source (likewise)
// against the scalar C of `f` as given; `tol` relative to the magnitude of
// the terms, since the lanes sum in another order.
inline void expect_rewritten_matches_oracle(const LoweredFunc& f, int width, float tol) {
  auto oracle = CompiledCModule::from_func(f);
  CSourceOptions vec;
  vec.vector_width = width;
  auto vector_c = CompiledCModule::from_func(f, vec);
  LLVMCompileOptions lo;
  lo.vector_width = width;
  auto jit = compile_llvm(f, lo);
  auto want = random_args(f), got_c = random_args(f), got_jit = random_args(f);
  oracle.run(ptrs(want));
  vector_c.run(ptrs(got_c));
  (*jit)(ptrs(got_jit));
  for (size_t i = 0; i < want.size(); ++i)
    for (size_t k = 0; k < want[i].size(); ++k) {
      const float y = want[i][k];
      ASSERT_NEAR(got_jit[i][k], y, tol * (1.f + std::fabs(y))) << f.args[i].name << "[" << k << "] (JIT)";
      ASSERT_NEAR(got_c[i][k], y, tol * (1.f + std::fabs(y))) << f.args[i].name << "[" << k << "] (C)";
    }
}

}  // namespace loom::llvm_test
