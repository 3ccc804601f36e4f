// ONNX import: the tiny networks of scripts/make_models.py --small (op counts
// and PyTorch's numbers through the reference interpreter), one-line errors
// for models Loom refuses, and ONNX's own node conformance cases (Debian's
// libonnx-testdata): each case of an op the importer maps either matches
// ONNX's expected outputs or is refused with a one-line LoomError.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

#include <unistd.h>

#include "network/executor.h"
#include "graph/graph.h"
#include "graph/interpreter.h"
#include "graph/onnx_import.h"
#include "ir/reference.h"
#include "tests/graph/graph_builder.h"
#include "tests/support/scratch_dir.h"

namespace loom::graph {
namespace {

namespace fs = std::filesystem;
using testing::error_of;
using testing::one_line;

const char* kPython = "/usr/bin/python3";
const char* kConformanceDir = "/usr/share/libonnx-testdata/data/node";

// The checkout's root: ctest sets LOOM_SOURCE_DIR; run by hand, this file's
// own location.
fs::path source_dir() {
  if (const char* src = std::getenv("LOOM_SOURCE_DIR")) return src;
  return fs::absolute(fs::path(__FILE__)).parent_path().parent_path().parent_path();
}

std::vector<float> read_floats(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<float> v(bytes.size() / sizeof(float));
  std::memcpy(v.data(), bytes.data(), v.size() * sizeof(float));
  return v;
}

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::map<std::string, int> op_counts(const Graph& g) {
  std::map<std::string, int> counts;
  for (const auto& n : g.nodes) ++counts[n.op];
  return counts;
}

// ---- the tiny networks ----------------------------------------------------------

// Generates the models once for the suite; skips without PyTorch.
class TinyModels : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (std::system((std::string(kPython) + " -c 'import torch, torchvision, onnx' >/dev/null 2>&1").c_str()) != 0) {
      skip_reason_ = std::string(kPython) + " lacks torch, torchvision or onnx";
      return;
    }
    dir_ = loom::testing::scratch_dir() / ("loom_onnx_models_" + std::to_string(getpid()));
    const fs::path script = source_dir() / "scripts" / "make_models.py";
    const std::string cmd = std::string(kPython) + " " + script.string() + " " + dir_.string() +
                            " --small >" + (dir_.string() + ".log") + " 2>&1";
    if (std::system(cmd.c_str()) != 0) generate_error_ = "failed: " + cmd + " (see the log)";
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    if (!dir_.empty()) {
      fs::remove_all(dir_, ec);
      fs::remove(dir_.string() + ".log", ec);
    }
  }
  void SetUp() override {
    if (!skip_reason_.empty()) GTEST_SKIP() << skip_reason_;
    ASSERT_EQ(generate_error_, "");
  }
  static fs::path model(const std::string& name) { return dir_ / (name + ".onnx"); }

  // PyTorch's output for the saved input, through Loom's interpreter.
  static void expect_pytorch_numbers(const std::string& name, const Graph& g) {
    ASSERT_EQ(g.inputs.size(), 1u);
    ASSERT_EQ(g.outputs.size(), 1u);
    Values in = {{g.inputs[0].name, read_floats(dir_ / (name + ".input.bin"))}};
    Values out = interpret(g, in);
    EXPECT_EQ(compare_outputs(out.at(g.outputs[0]), read_floats(dir_ / (name + ".output.bin"))), "");
  }

  static inline fs::path dir_;
  static inline std::string skip_reason_, generate_error_;
};

TEST_F(TinyModels, CnnImportsWithItsOps) {
  Graph g = import_onnx(model("tiny_cnn").string());
  // Pad (zero pads, before AveragePool) and the Constant holding its pads fold away.
  const std::map<std::string, int> expected = {{"conv2d", 2}, {"batch_norm", 2}, {"relu", 2},
                                               {"add", 1},    {"max_pool2d", 1}, {"avg_pool2d", 1},
                                               {"flatten", 1}, {"gemm", 1}};
  EXPECT_EQ(op_counts(g), expected);
  ASSERT_EQ(g.inputs.size(), 1u);
  EXPECT_EQ(g.inputs[0].name, "input");
  EXPECT_EQ(g.inputs[0].shape, (Shape{1, 4, 8, 8}));
  EXPECT_EQ(g.shape(g.outputs.at(0)), (Shape{1, 10}));
  // Weights are constants, not inputs; nothing but float32 data.
  EXPECT_GE(g.constants.size(), 9u);
  expect_pytorch_numbers("tiny_cnn", g);
}

TEST_F(TinyModels, AttentionImportsWithItsOps) {
  Graph g = import_onnx(model("tiny_attention").string());
  // Linear on 3-D data exports as MatMul + Add; GELU as Div, Erf, Add, Mul, Mul.
  const std::map<std::string, int> expected = {{"matmul", 8},    {"add", 9},    {"reshape", 4},
                                               {"transpose", 4}, {"mul", 3},    {"layer_norm", 2},
                                               {"softmax", 1},   {"div", 1},    {"erf", 1}};
  EXPECT_EQ(op_counts(g), expected);
  EXPECT_EQ(g.shape(g.outputs.at(0)), (Shape{1, 8, 16}));
  expect_pytorch_numbers("tiny_attention", g);
}

TEST_F(TinyModels, OpsModelImportsEveryOtherOperatorAndMatchesPyTorch) {
  Graph g = import_onnx(model("tiny_ops").string());
  std::map<std::string, int> counts = op_counts(g);
  for (const char* op : {"conv2d", "clip", "sigmoid", "tanh", "exp", "log", "sqrt", "abs", "neg", "pow_scalar", "sub",
                         "div", "max", "min", "max_pool2d", "avg_pool2d", "global_avg_pool2d", "concat", "softmax",
                         "reduce_mean", "reduce_sum", "matmul", "transpose", "flatten"})
    EXPECT_GE(counts[op], 1) << op;
  expect_pytorch_numbers("tiny_ops", g);
}

TEST_F(TinyModels, MobileModelImportsSplitsPadsResizesAndMasksAndMatchesPyTorch) {
  Graph g = import_onnx(model("tiny_mobile").string());
  std::map<std::string, int> counts = op_counts(g);
  // chunk and split: slices of data; the causal mask: a constant read by where.
  for (const char* op : {"slice", "pad", "hard_sigmoid", "resize", "leaky_relu", "elu", "prelu", "where"})
    EXPECT_GE(counts[op], 1) << op;
  EXPECT_EQ(counts["resize"], 2);
  expect_pytorch_numbers("tiny_mobile", g);
}

TEST_F(TinyModels, CubicResizeIsRefusedNamingTheNodeAndTheMode) {
  const std::string path = model("bad_resize_cubic").string();
  EXPECT_EQ(error_of([&] { import_onnx(path); }),
            path + ": node 'upsample' (Resize): attribute mode=cubic is not supported (nearest, linear)");
}

// Each operator mapped for the model zoo refuses an attribute it does not
// know, in one line naming the node, its op type and the attribute.
TEST_F(TinyModels, NewerOperatorsRefuseAnUnknownAttributeNamingIt) {
  const fs::path dir = dir_ / "bad_attribute";
  int checked = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string op = entry.path().stem().string();
    std::string lower = op;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    const std::string path = entry.path().string();
    EXPECT_EQ(error_of([&] { import_onnx(path); }),
              path + ": node 'odd_" + lower + "' (" + op + "): attribute 'bogus' is not supported");
    ++checked;
  }
  EXPECT_GE(checked, 39);
}

TEST_F(TinyModels, SplitSizesThatDoNotAddUpNameTheNode) {
  const std::string path = model("bad_split_sizes").string();
  EXPECT_EQ(error_of([&] { import_onnx(path); }),
            path + ": node 'split_channels' (Split): split sizes [1,2] add up to 3, not dim 1's 2");
}

// The executor's compiled kernels (default schedules) against PyTorch's own
// output for the saved input.
TEST_F(TinyModels, ExecutorMatchesPyTorchOnEveryTinyModelOnOneAndTwoThreads) {
  for (const char* name : {"tiny_cnn", "tiny_attention", "tiny_ops", "tiny_mobile"}) {
    Graph g = import_onnx(model(name).string());
    for (int threads : {1, 2}) {
      NetworkExecutor ex(g, {threads});
      Values out = ex.run({{g.inputs[0].name, read_floats(dir_ / (std::string(name) + ".input.bin"))}});
      EXPECT_EQ(compare_outputs(out.at(g.outputs[0]), read_floats(dir_ / (std::string(name) + ".output.bin"))), "")
          << name << " on " << threads << " threads";
    }
  }
}

TEST_F(TinyModels, MismatchedShapesNameTheNode) {
  const std::string path = model("bad_mismatched_shapes").string();
  EXPECT_EQ(error_of([&] { import_onnx(path); }),
            path + ": node 'add_ab' (Add): shapes 2x3 and 4x5 do not broadcast");
}

TEST_F(TinyModels, ShapeComputationsFoldIntoTheReshape) {
  Graph g = import_onnx(model("shape_chain").string());
  ASSERT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.nodes[0].op, "reshape");
  EXPECT_EQ(g.nodes[0].attrs["shape"], (nlohmann::json{2, 12}));
  EXPECT_EQ(g.nodes[1].op, "transpose");
  // The int64 initializers were shape data only: no constants, one input.
  EXPECT_TRUE(g.constants.empty());
  ASSERT_EQ(g.inputs.size(), 1u);
  std::vector<float> x(24), expected(24);
  for (int i = 0; i < 24; ++i) x[i] = static_cast<float>(i);
  for (int r = 0; r < 12; ++r)
    for (int c = 0; c < 2; ++c) expected[r * 2 + c] = x[c * 12 + r];
  EXPECT_EQ(compare_outputs(interpret(g, {{"x", x}}).at(g.outputs[0]), expected), "");
}

// Corrupted files import or fail with one line; they never crash.
TEST_F(TinyModels, MutatedBytesNeverCrash) {
  for (const char* name : {"tiny_cnn", "tiny_attention", "shape_chain"}) {
    const std::string bytes = read_bytes(model(name));
    uint32_t s = 12345;
    auto next = [&] { return s = s * 1664525u + 1013904223u; };
    for (int trial = 0; trial < 300; ++trial) {
      std::string b = bytes;
      for (uint32_t k = 0, n = 1 + next() % 4; k < n; ++k) b[next() % b.size()] = static_cast<char>(next() >> 24);
      if (next() % 8 == 0) b.resize(next() % b.size());
      try {
        import_onnx_bytes(b, "mutated.onnx");
      } catch (const LoomError& e) {
        EXPECT_TRUE(one_line(e.what())) << e.what();
      }
    }
  }
}

TEST_F(TinyModels, TruncatedFileIsNotAValidModel) {
  const std::string bytes = read_bytes(model("tiny_cnn"));
  const std::string msg = error_of([&] { import_onnx_bytes(bytes.substr(0, bytes.size() / 2), "half.onnx"); });
  EXPECT_EQ(msg, "half.onnx: not a valid ONNX model (protobuf parse failed)");
}

TEST_F(TinyModels, DynamicDimensionNamesTheInput) {
  const std::string path = model("bad_dynamic_batch").string();
  EXPECT_EQ(error_of([&] { import_onnx(path); }),
            path + ": input 'x': dynamic dimension 'batch' (pin it: --shape x=Nx4, or the config's \"input_shapes\")");
}

TEST_F(TinyModels, PinnedDynamicDimensionMakesTheGraphStatic) {
  OnnxImportOptions options;
  options.input_shapes["x"] = {3, 4};
  Graph g = import_onnx(model("bad_dynamic_batch").string(), options);
  ASSERT_EQ(g.inputs.size(), 1u);
  EXPECT_EQ(g.inputs[0].shape, (Shape{3, 4}));
  EXPECT_EQ(g.shape(g.outputs.at(0)), (Shape{3, 4}));
}

TEST_F(TinyModels, PinThatContradictsAStaticDimOrNamesNoInputIsAnError) {
  const std::string path = model("bad_dynamic_batch").string();
  OnnxImportOptions wrong_dim, no_input;
  wrong_dim.input_shapes["x"] = {3, 5};
  no_input.input_shapes["y"] = {3, 4};
  EXPECT_EQ(error_of([&] { import_onnx(path, wrong_dim); }), path + ": input 'x': dim 1 is 4 in the model, not 5");
  EXPECT_EQ(error_of([&] { import_onnx(path, no_input); }),
            path + ": no input 'y' to give a shape (the inputs: 'x')");
}

TEST_F(TinyModels, UnsupportedOperatorNamesTheNode) {
  const std::string path = model("bad_unsupported_op").string();
  EXPECT_EQ(error_of([&] { import_onnx(path); }),
            path + ": node 'NonMaxSuppression_0' (NonMaxSuppression): unsupported operator");
}

TEST(OnnxImport, GarbageAndMissingFilesAreOneLineErrors) {
  const std::string garbage = error_of([] { import_onnx_bytes(std::string("\xff\xff\xff\xff not onnx", 13), "junk.onnx"); });
  EXPECT_EQ(garbage, "junk.onnx: not a valid ONNX model (protobuf parse failed)");
  const std::string missing = error_of([] { import_onnx("/nonexistent/model.onnx"); });
  EXPECT_EQ(missing, "/nonexistent/model.onnx: cannot open the file");
  EXPECT_TRUE(one_line(error_of([] { import_onnx_bytes("", "empty.onnx"); })));
}

// ---- ONNX's node conformance cases ---------------------------------------------

enum class Outcome { kPassed, kRefused, kFailed };

struct CaseResult {
  Outcome outcome;
  std::string detail;
};

// A refusal must be one line naming what it refuses (a node, input or output).
bool is_clear_refusal(const std::string& msg) {
  return one_line(msg) && (msg.find("node '") != std::string::npos || msg.find("input '") != std::string::npos ||
                           msg.find("output '") != std::string::npos);
}

// Every input file is offered as a known input: the importer takes from them
// the constant data an op needs (shapes, axes, bounds) and feeds the rest as
// data.
CaseResult run_case(const fs::path& dir, const OnnxModelInfo& info) {
  const fs::path data = dir / "test_data_set_0";
  OnnxImportOptions options;
  for (size_t i = 0; i < info.inputs.size(); ++i) {
    const fs::path file = data / ("input_" + std::to_string(i) + ".pb");
    if (fs::exists(file)) options.known_input_files[info.inputs[i]] = file.string();
  }
  Graph g;
  try {
    g = import_onnx((dir / "model.onnx").string(), options);
  } catch (const LoomError& e) {
    return {is_clear_refusal(e.what()) ? Outcome::kRefused : Outcome::kFailed, e.what()};
  } catch (const std::exception& e) {
    return {Outcome::kFailed, std::string("not a LoomError: ") + e.what()};
  }
  try {
    Values inputs;
    for (const auto& in : g.inputs) {
      auto it = std::find(info.inputs.begin(), info.inputs.end(), in.name);
      if (it == info.inputs.end()) return {Outcome::kFailed, "graph input '" + in.name + "' is not a model input"};
      inputs[in.name] = read_onnx_tensor_file(options.known_input_files.at(in.name));
    }
    const Values values = interpret(g, inputs);
    if (g.outputs.size() != info.outputs.size()) return {Outcome::kFailed, "output count differs"};
    for (size_t k = 0; k < g.outputs.size(); ++k) {
      Shape shape;
      const auto expected = read_onnx_tensor_file((data / ("output_" + std::to_string(k) + ".pb")).string(), &shape);
      if (g.shape(g.outputs[k]) != shape)
        return {Outcome::kFailed, "output " + std::to_string(k) + " has shape " + shape_string(g.shape(g.outputs[k])) +
                                      ", expected " + shape_string(shape)};
      const std::string diff = compare_outputs(values.at(g.outputs[k]), expected);
      if (!diff.empty()) return {Outcome::kFailed, "output " + std::to_string(k) + ": " + diff};
    }
  } catch (const std::exception& e) {
    return {Outcome::kFailed, std::string("after import: ") + e.what()};
  }
  return {Outcome::kPassed, ""};
}

// The table's row: the case's op types (Constant aside), e.g. "Conv" or, for
// an expanded function, "Div+Exp+ReduceMax+ReduceSum+Sub".
std::string row_of(const OnnxModelInfo& info) {
  std::set<std::string> ops;
  for (const auto& op : info.op_types)
    if (op != "Constant") ops.insert(op);
  if (ops.empty()) return "Constant";
  std::string row;
  for (const auto& op : ops) row += (row.empty() ? "" : "+") + op;
  return row;
}

TEST(OnnxConformance, NodeCasesMatchOrAreRefused) {
  if (!fs::is_directory(kConformanceDir)) GTEST_SKIP() << kConformanceDir << " is missing (Debian's libonnx-testdata)";
  const auto& ops = onnx_importable_ops();
  const std::set<std::string> importable(ops.begin(), ops.end());
  std::vector<fs::path> cases;
  for (const auto& entry : fs::directory_iterator(kConformanceDir))
    if (entry.path().filename().string().rfind("test_", 0) == 0) cases.push_back(entry.path());
  std::sort(cases.begin(), cases.end());

  struct Tally {
    int passed = 0, refused = 0, failed = 0;
  };
  std::map<std::string, Tally> table;
  std::vector<std::string> refusals, failures;
  for (const auto& dir : cases) {
    OnnxModelInfo info;
    try {
      info = read_onnx_model_info((dir / "model.onnx").string());
    } catch (const LoomError&) {
      continue;  // not a model this importer is asked to read
    }
    if (!std::all_of(info.op_types.begin(), info.op_types.end(), [&](const std::string& op) { return importable.count(op); }))
      continue;
    const CaseResult r = run_case(dir, info);
    Tally& t = table[row_of(info)];
    const std::string line = dir.filename().string() + ": " + r.detail;
    switch (r.outcome) {
      case Outcome::kPassed: ++t.passed; break;
      case Outcome::kRefused: ++t.refused; refusals.push_back(line); break;
      case Outcome::kFailed: ++t.failed; failures.push_back(line); break;
    }
  }

  Tally total;
  std::printf("%-44s %6s %7s %6s\n", "ONNX op(s)", "passed", "refused", "failed");
  for (const auto& [row, t] : table) {
    std::printf("%-44s %6d %7d %6d\n", row.c_str(), t.passed, t.refused, t.failed);
    total.passed += t.passed;
    total.refused += t.refused;
    total.failed += t.failed;
  }
  std::printf("%-44s %6d %7d %6d\n", "total", total.passed, total.refused, total.failed);
  for (const auto& r : refusals) std::printf("refused %s\n", r.c_str());
  for (const auto& f : failures) ADD_FAILURE() << "failed " << f;
  EXPECT_GT(total.passed, 0);
}

}  // namespace
}  // namespace loom::graph
