// The executor runs a network from compiled kernels and matches the
// reference interpreter; tuned programs come from a records log.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "graph/executor/default_schedule.h"
#include "graph/executor/executor.h"
#include "graph/interpreter.h"
#include "ir/reference.h"
#include "measure/records.h"
#include "measure/task.h"

namespace loom::graph {
namespace {

// Deterministic constant data in [-0.5, 0.5).
Constant make_constant(Shape shape, uint32_t seed) {
  Constant c{shape, std::vector<float>(num_elements(shape))};
  uint32_t s = seed * 2654435761u + 1;
  for (float& v : c.data) {
    s = s * 1664525u + 1013904223u;
    v = static_cast<float>((s >> 8) / 16777216.0 - 0.5);
  }
  return c;
}

void add_node(Graph& g, const std::string& op, std::vector<std::string> inputs, const std::string& out,
              nlohmann::json attrs = nlohmann::json::object()) {
  g.nodes.push_back({"n_" + out, op, std::move(inputs), out, std::move(attrs)});
}

// conv-bn-relu, conv-bn + residual add + relu, max pool, global pool,
// flatten, gemm: the blocks of a ResNet on an 8x8 image.
Graph small_resnet() {
  Graph g;
  g.inputs = {{"x", {1, 3, 8, 8}}};
  g.constants["w1"] = make_constant({8, 3, 3, 3}, 1);
  g.constants["w2"] = make_constant({8, 8, 3, 3}, 2);
  for (const char* p : {"bn1", "bn2"}) {
    g.constants[std::string(p) + "_scale"] = make_constant({8}, 3);
    g.constants[std::string(p) + "_bias"] = make_constant({8}, 4);
    g.constants[std::string(p) + "_mean"] = make_constant({8}, 5);
    Constant var = make_constant({8}, 6);
    for (float& v : var.data) v += 1.0f;  // positive variances
    g.constants[std::string(p) + "_var"] = var;
  }
  g.constants["fc_w"] = make_constant({5, 8}, 7);
  g.constants["fc_b"] = make_constant({5}, 8);
  nlohmann::json conv = {{"pads", {1, 1, 1, 1}}};
  add_node(g, "conv2d", {"x", "w1"}, "c1", conv);
  add_node(g, "batch_norm", {"c1", "bn1_scale", "bn1_bias", "bn1_mean", "bn1_var"}, "b1");
  add_node(g, "relu", {"b1"}, "r1");
  add_node(g, "conv2d", {"r1", "w2"}, "c2", conv);
  add_node(g, "batch_norm", {"c2", "bn2_scale", "bn2_bias", "bn2_mean", "bn2_var"}, "b2");
  add_node(g, "add", {"b2", "r1"}, "s2");
  add_node(g, "relu", {"s2"}, "r2");
  add_node(g, "max_pool2d", {"r2"}, "p", {{"kernel", {3, 3}}, {"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}});
  add_node(g, "global_avg_pool2d", {"p"}, "gp");
  add_node(g, "flatten", {"gp"}, "f");
  add_node(g, "gemm", {"f", "fc_w", "fc_b"}, "y", {{"trans_b", 1}});
  g.outputs = {"y"};
  g.validate();
  return g;
}

// One attention head with layer norm and a GELU feed-forward (sequence 8,
// hidden 16).
Graph small_attention() {
  Graph g;
  g.inputs = {{"x", {1, 8, 16}}};
  for (const char* w : {"wq", "wk", "wv", "w1"}) g.constants[w] = make_constant({16, 16}, w[1]);
  g.constants["scale"] = Constant{{}, {0.25f}};
  g.constants["ln_s"] = make_constant({16}, 11);
  g.constants["ln_b"] = make_constant({16}, 12);
  add_node(g, "matmul", {"x", "wq"}, "q");
  add_node(g, "matmul", {"x", "wk"}, "k");
  add_node(g, "matmul", {"x", "wv"}, "v");
  add_node(g, "transpose", {"k"}, "kt", {{"perm", {0, 2, 1}}});
  add_node(g, "matmul", {"q", "kt"}, "s");
  add_node(g, "mul", {"s", "scale"}, "ss");
  add_node(g, "softmax", {"ss"}, "a", {{"axis", -1}});
  add_node(g, "matmul", {"a", "v"}, "o");
  add_node(g, "add", {"o", "x"}, "res");
  add_node(g, "layer_norm", {"res", "ln_s", "ln_b"}, "ln");
  add_node(g, "matmul", {"ln", "w1"}, "h");
  add_node(g, "gelu", {"h"}, "y");
  g.outputs = {"y"};
  g.validate();
  return g;
}

void expect_matches_interpreter(const Graph& g, int threads) {
  NetworkExecutor ex(g, {threads});
  Values inputs = random_graph_inputs(g, 3);
  Values got = ex.run(inputs);
  Values want = interpret(g, inputs);
  for (const auto& o : g.outputs) EXPECT_EQ(compare_outputs(got.at(o), want.at(o), 1e-3, 1e-4), "") << o;
}

TEST(NetworkExecutor, SmallResNetMatchesTheInterpreterOnOneThread) { expect_matches_interpreter(small_resnet(), 1); }
TEST(NetworkExecutor, SmallResNetMatchesTheInterpreterOnTwoThreads) { expect_matches_interpreter(small_resnet(), 2); }
TEST(NetworkExecutor, AttentionBlockMatchesTheInterpreterOnOneThread) { expect_matches_interpreter(small_attention(), 1); }
TEST(NetworkExecutor, AttentionBlockMatchesTheInterpreterOnTwoThreads) { expect_matches_interpreter(small_attention(), 2); }

TEST(NetworkExecutor, ReusesTheBufferOfAValueWhoseLastReaderHasRun) {
  // x -> conv -> softmax -> conv -> softmax: four groups in a chain; the
  // third group's output can take the first group's buffer.
  Graph g;
  g.inputs = {{"x", {1, 4, 6, 6}}};
  g.constants["w"] = make_constant({4, 4, 1, 1}, 1);
  add_node(g, "conv2d", {"x", "w"}, "a");
  add_node(g, "softmax", {"a"}, "b", {{"axis", 1}});
  add_node(g, "conv2d", {"b", "w"}, "c");
  add_node(g, "softmax", {"c"}, "y", {{"axis", 1}});
  g.outputs = {"y"};
  g.validate();
  NetworkExecutor ex(g, {1});
  ASSERT_EQ(ex.tasks().groups.size(), 4u);
  EXPECT_EQ(ex.unplanned_bytes(), 4 * 144 * 4);
  EXPECT_EQ(ex.planned_bytes(), 2 * 144 * 4);  // a and c share, b alone; y is an output
  Values inputs = random_graph_inputs(g, 1);
  EXPECT_EQ(compare_outputs(ex.run(inputs).at("y"), interpret(g, inputs).at("y")), "");
}

TEST(NetworkExecutor, TakesATaskProgramFromTheLog) {
  Graph g = small_resnet();
  NetworkTasks nt = extract_tasks(g);
  // A record of the first task: its default schedule, measured.
  Task task = Task::make(kSubgraphWorkload, nt.tasks[0].subgraph, Target{});
  MeasureRecord rec;
  rec.task = task;
  rec.steps = default_schedule(task.dag, 1, 16).steps_json();
  rec.result.costs_s = {1e-3};
  const std::string log = (std::filesystem::temp_directory_path() / "loom_executor_log.json").string();
  std::remove(log.c_str());
  {
    RecordLog out(log);
    out.append({rec});
  }
  NetworkExecutor ex(g, {1, log});
  EXPECT_TRUE(ex.kernels()[0].tuned);
  EXPECT_FALSE(ex.kernels()[1].tuned);
  Values inputs = random_graph_inputs(g, 2);
  EXPECT_EQ(compare_outputs(ex.run(inputs).at("y"), interpret(g, inputs).at("y")), "");
  std::remove(log.c_str());
}

TEST(NetworkExecutor, RejectsAMissingInputNamingIt) {
  NetworkExecutor ex(small_resnet(), {1});
  try {
    ex.run({});
    FAIL() << "expected an error";
  } catch (const LoomError& e) {
    EXPECT_STREQ(e.what(), "input 'x': no value given");
  }
}

}  // namespace
}  // namespace loom::graph
