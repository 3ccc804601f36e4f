// The exported kernel: compile_llvm_object's object file links with the C
// runtime (codegen/runtime/c_runtime.h) into a C program built by the system
// compiler, and computes what the JIT's kernel computes.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "codegen/c/compile.h"
#include "codegen/runtime/c_runtime.h"
#include "codegen/llvm/llvm_jit.h"
#include "tests/support/loop_nest.h"
#include "tests/support/scratch_dir.h"

namespace loom {
namespace {

using namespace loop_nest;
namespace fs = std::filesystem;

class ExportedObject : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = loom::testing::scratch_dir() / ("loom_object_" + std::to_string(getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    write("loom_runtime.h", c_runtime_header());
    write("loom_runtime.c", c_runtime_source());
  }
  void TearDown() override { fs::remove_all(dir_); }

  void write(const std::string& name, const std::string& text) {
    std::ofstream out(dir_ / name, std::ios::binary);
    out << text;
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::string read(const std::string& name) const {
    std::ifstream in(dir_ / name);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  // Builds the files with cc and runs the program; returns its stdout (or
  // the build's output prefixed by "build failed").
  std::string build_and_run(const std::vector<std::string>& files) {
    std::vector<std::string> cmd = {"cc", "-O2", "-I" + dir_.string(), "-o", path("prog")};
    for (const auto& f : files) cmd.push_back(path(f));
    for (const char* lib : {"-lmvec", "-lm", "-pthread"}) cmd.push_back(lib);
    if (run_process(cmd, path("build.log")) != 0) return "build failed: " + read("build.log");
    if (run_process({path("prog")}, path("run.log")) != 0) return "run failed: " + read("run.log");
    return read("run.log");
  }

  fs::path dir_;
};

// B[i] = exp(A[i]) * 2 + 1 over a parallel loop of vector chunks with a
// tail (37 = 2 x 16 + 5), through a temp buffer.
LoweredFunc parallel_vector_kernel(int64_t rows, int64_t cols) {
  Var i = make_var("i", rows), j = make_var("j", cols), k = make_var("k", cols);
  Stmt fill = make_for(j, cols, ForKind::kVectorized,
                       make_store("T", j, call("exp", {ld("A", i * cols + j)})));
  Stmt use = make_for(k, cols, ForKind::kVectorized, make_store("B", i * cols + k, ld("T", k) * 2.0f + 1.0f));
  LoweredFunc f = func("obj_kernel", {buf("A", {rows, cols}), buf("B", {rows, cols})},
                       make_for(i, rows, ForKind::kParallel, make_allocate("T", make_seq({fill, use}))));
  f.temps.push_back(buf("T", {cols}));
  return f;
}

TEST_F(ExportedObject, LinksIntoACProgramAndMatchesTheJIT) {
  const int64_t rows = 9, cols = 37;
  LoweredFunc f = parallel_vector_kernel(rows, cols);
  LLVMCompileOptions opts;
  opts.num_threads = 2;
  write("kernel.o", compile_llvm_object(f, "my_kernel", opts));
  std::vector<float> a(rows * cols), want(rows * cols);
  for (size_t x = 0; x < a.size(); ++x) a[x] = 0.01f * static_cast<float>(x) - 1.5f;
  compile_llvm(f, opts)->operator()({a.data(), want.data()});

  std::ostringstream prog;
  prog << "#include <stdio.h>\nvoid my_kernel(float* A, float* B);\nvoid my_kernel_packed(float** args);\n"
       << "int main(void) {\n  static float a[" << a.size() << "], b[" << a.size() << "], c[" << a.size() << "];\n"
       << "  for (int x = 0; x < " << a.size() << "; ++x) a[x] = 0.01f * (float)x - 1.5f;\n"
       << "  my_kernel(a, b);\n  float* args[2] = {a, c};\n  my_kernel_packed(args);\n"
       << "  for (int x = 0; x < " << a.size() << "; ++x) printf(\"%.9g %.9g\\n\", b[x], c[x]);\n  return 0;\n}\n";
  write("main.c", prog.str());
  std::string out = build_and_run({"main.c", "kernel.o", "loom_runtime.c"});
  std::istringstream lines(out);
  for (size_t x = 0; x < want.size(); ++x) {
    float typed = 0, packed = 0;
    ASSERT_TRUE(lines >> typed >> packed) << out.substr(0, 2000);
    EXPECT_EQ(typed, want[x]) << x;  // the same machine code: bit for bit
    EXPECT_EQ(packed, want[x]) << x;
  }
}

TEST_F(ExportedObject, RuntimeRunsEveryIndexOnceForAnyThreadCount) {
  write("main.c", R"C(#include <stdatomic.h>
#include <stdio.h>
#include "loom_runtime.h"
static atomic_int hits[1000];
static atomic_int nested_serial = 1;
static void inner(int64_t b, int64_t e, void* c) { (void)c; (void)b; (void)e; }
static void body(int64_t b, int64_t e, void* c) {
  int64_t* extent = (int64_t*)c;
  if (b < 0 || e > *extent || b >= e) nested_serial = 0;
  for (int64_t i = b; i < e; ++i) atomic_fetch_add(&hits[i], 1);
  loom_parallel_for(4, inner, 0, 4);  /* nested: runs serially, must not deadlock */
}
int main(void) {
  int64_t extents[] = {1, 2, 3, 7, 64, 1000};
  for (int t = 0; t <= 5; ++t)
    for (int x = 0; x < 6; ++x)
      for (int rep = 0; rep < 50; ++rep) {
        int64_t n = extents[x];
        for (int64_t i = 0; i < n; ++i) hits[i] = 0;
        loom_parallel_for(n, body, &n, t);
        for (int64_t i = 0; i < n; ++i)
          if (hits[i] != 1) { printf("threads %d extent %lld: index %lld ran %d times\n", t, (long long)n, (long long)i, hits[i]); return 1; }
      }
  printf(nested_serial ? "ok\n" : "bad range\n");
  return 0;
}
)C");
  EXPECT_EQ(build_and_run({"main.c", "loom_runtime.c"}), "ok\n");
}

}  // namespace
}  // namespace loom
