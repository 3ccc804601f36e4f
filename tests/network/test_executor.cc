// The executor runs a network from compiled kernels and matches the
// reference interpreter; tuned programs come from a records log.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "network/default_schedule.h"
#include "network/executor.h"
#include "graph/interpreter.h"
#include "ir/reference.h"
#include "measure/records.h"
#include "measure/task.h"
#include "tests/graph/graph_builder.h"
#include "tests/support/scratch_dir.h"

namespace loom::graph {
namespace {

using testing::GraphBuilder;

// conv-bn-relu, conv-bn + residual add + relu, max pool, global pool,
// flatten, gemm: the blocks of a ResNet on an 8x8 image.
Graph small_resnet() {
  GraphBuilder b;
  b.input("x", {1, 3, 8, 8}).pattern_constant("w1", {8, 3, 3, 3}, 1).pattern_constant("w2", {8, 8, 3, 3}, 2);
  for (const std::string p : {"bn1", "bn2"}) {
    std::vector<float> var = GraphBuilder::pattern_values(8, 6);
    for (float& v : var) v += 1.5f;  // positive variances
    b.pattern_constant(p + "_scale", {8}, 3).pattern_constant(p + "_bias", {8}, 4).pattern_constant(p + "_mean", {8}, 5);
    b.constant(p + "_var", {8}, var);
  }
  b.pattern_constant("fc_w", {5, 8}, 7).pattern_constant("fc_b", {5}, 8);
  const nlohmann::json conv = {{"pads", {1, 1, 1, 1}}};
  b.node("conv2d", {"x", "w1"}, "c1", conv)
      .node("batch_norm", {"c1", "bn1_scale", "bn1_bias", "bn1_mean", "bn1_var"}, "b1")
      .node("relu", {"b1"}, "r1")
      .node("conv2d", {"r1", "w2"}, "c2", conv)
      .node("batch_norm", {"c2", "bn2_scale", "bn2_bias", "bn2_mean", "bn2_var"}, "b2")
      .node("add", {"b2", "r1"}, "s2")
      .node("relu", {"s2"}, "r2")
      .node("max_pool2d", {"r2"}, "p", {{"kernel", {3, 3}}, {"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}})
      .node("global_avg_pool2d", {"p"}, "gp")
      .node("flatten", {"gp"}, "f")
      .node("gemm", {"f", "fc_w", "fc_b"}, "y", {{"trans_b", 1}});
  return b.build({"y"});
}

// One attention head with layer norm and a GELU feed-forward (sequence 8,
// hidden 16).
Graph small_attention() {
  GraphBuilder b;
  b.input("x", {1, 8, 16});
  uint32_t seed = 1;
  for (const char* w : {"wq", "wk", "wv", "w1"}) b.pattern_constant(w, {16, 16}, seed++);
  b.constant("scale", {}, {0.25f}).pattern_constant("ln_s", {16}, 11).pattern_constant("ln_b", {16}, 12);
  b.node("matmul", {"x", "wq"}, "q")
      .node("matmul", {"x", "wk"}, "k")
      .node("matmul", {"x", "wv"}, "v")
      .node("transpose", {"k"}, "kt", {{"perm", {0, 2, 1}}})
      .node("matmul", {"q", "kt"}, "s")
      .node("mul", {"s", "scale"}, "ss")
      .node("softmax", {"ss"}, "a", {{"axis", -1}})
      .node("matmul", {"a", "v"}, "o")
      .node("add", {"o", "x"}, "res")
      .node("layer_norm", {"res", "ln_s", "ln_b"}, "ln")
      .node("matmul", {"ln", "w1"}, "h")
      .node("gelu", {"h"}, "y");
  return b.build({"y"});
}

// The data-movement and activation ops of mobile CNNs, segmentation heads
// and transformers in one network: a channel split (slice), reflect and
// edge pads, a bilinear and a nearest resize, a gather of two rows, a mask
// made by a comparison applied with where, hard-swish, leaky ReLU, PReLU.
Graph movement_ops() {
  GraphBuilder b;
  b.input("x", {1, 4, 6, 6}).pattern_constant("w", {4, 2, 3, 3}, 1).pattern_constant("slope", {4, 1, 1}, 2);
  b.constant("half", {}, {0.5f}).constant("fill", {}, {-3.0f});
  b.node("slice", {"x"}, "lo", {{"starts", {0, 0, 0, 0}}, {"steps", {1, 1, 1, 1}}, {"sizes", {1, 2, 6, 6}}})
      .node("slice", {"x"}, "hi", {{"starts", {0, 3, 5, 0}}, {"steps", {1, -1, -1, 2}}, {"sizes", {1, 2, 6, 3}}})
      .node("pad", {"lo"}, "lo_p", {{"pads", {0, 0, 1, 1, 0, 0, 1, 1}}, {"mode", "reflect"}})
      .node("conv2d", {"lo_p", "w"}, "c")
      .node("hard_swish", {"c"}, "hs")
      .node("resize", {"hi"}, "up",
            {{"sizes", {1, 2, 12, 6}}, {"scale_num", {1, 1, 2, 2}}, {"scale_den", {1, 1, 1, 1}}, {"mode", "linear"},
             {"coordinate_transformation_mode", "half_pixel"}})
      .node("pad", {"hs"}, "hs_p", {{"pads", {0, 0, 3, 0, 0, 0, 3, 0}}, {"mode", "edge"}})
      .node("resize", {"hs_p"}, "hs_up",
            {{"sizes", {1, 4, 12, 6}}, {"scale_num", {1, 1, 1, 1}}, {"scale_den", {1, 1, 1, 1}}, {"mode", "nearest"},
             {"coordinate_transformation_mode", "asymmetric"}, {"nearest_mode", "floor"}})
      .node("take", {"up"}, "rows", {{"axis", 1}, {"indices", {1, 0, 1, 1}}})
      .node("add", {"rows", "hs_up"}, "sum")
      .node("greater", {"sum", "half"}, "mask")
      .node("where", {"mask", "sum", "fill"}, "masked")
      .node("leaky_relu", {"masked"}, "lr", {{"alpha", 0.1}})
      .node("prelu", {"lr", "slope"}, "pr")
      .node("einsum", {"pr", "pr"}, "y", {{"equation", "nchw,nchv->ncwv"}});
  return b.build({"y"});
}

// A log (in the temp directory) holding one measured record of `s`.
std::string write_log(const std::string& file, const Task& task, const State& s) {
  MeasureRecord rec;
  rec.task = task;
  rec.steps = s.steps_json();
  rec.result.costs_s = {1e-3};
  const std::string log = (loom::testing::scratch_dir() / file).string();
  std::remove(log.c_str());
  RecordLog out(log);
  out.append({rec});
  return log;
}

void expect_matches_interpreter(const Graph& g, int threads) {
  NetworkExecutor ex(g, {threads});
  Values inputs = random_graph_inputs(g, 3);
  Values got = ex.run(inputs);
  Values want = interpret(g, inputs);
  for (const auto& o : g.outputs) EXPECT_EQ(compare_outputs(got.at(o), want.at(o), 1e-3, 1e-4), "") << o;
}

TEST(NetworkExecutor, MovementAndActivationOpsMatchTheInterpreterOnOneThread) {
  expect_matches_interpreter(movement_ops(), 1);
}
TEST(NetworkExecutor, MovementAndActivationOpsMatchTheInterpreterOnTwoThreads) {
  expect_matches_interpreter(movement_ops(), 2);
}
TEST(NetworkExecutor, SmallResNetMatchesTheInterpreterOnOneThread) { expect_matches_interpreter(small_resnet(), 1); }
TEST(NetworkExecutor, SmallResNetMatchesTheInterpreterOnTwoThreads) { expect_matches_interpreter(small_resnet(), 2); }
TEST(NetworkExecutor, AttentionBlockMatchesTheInterpreterOnOneThread) { expect_matches_interpreter(small_attention(), 1); }
TEST(NetworkExecutor, AttentionBlockMatchesTheInterpreterOnTwoThreads) { expect_matches_interpreter(small_attention(), 2); }

TEST(NetworkExecutor, ReusesTheBufferOfAValueWhoseLastReaderHasRun) {
  // x -> conv -> softmax -> conv -> softmax: four groups in a chain; the
  // third group's output can take the first group's buffer.
  Graph g = GraphBuilder()
                .input("x", {1, 4, 6, 6})
                .pattern_constant("w", {4, 4, 1, 1})
                .node("conv2d", {"x", "w"}, "a")
                .node("softmax", {"a"}, "b", {{"axis", 1}})
                .node("conv2d", {"b", "w"}, "c")
                .node("softmax", {"c"}, "y", {{"axis", 1}})
                .build({"y"});
  NetworkExecutor ex(g, {1});
  ASSERT_EQ(ex.tasks().groups.size(), 4u);
  EXPECT_EQ(ex.unplanned_bytes(), 4 * 144 * 4);
  EXPECT_EQ(ex.planned_bytes(), 2 * 144 * 4);  // a and c share, b alone; y is an output
  Values inputs = random_graph_inputs(g, 1);
  EXPECT_EQ(compare_outputs(ex.run(inputs).at("y"), interpret(g, inputs).at("y")), "");
}

TEST(NetworkExecutor, ReadsAWeightSharedByTwoGroupsFromOneCopy) {
  // The same weight read by two convolutions (and a bias as it is): the
  // executor's weight arena holds each constant once.
  Graph g = GraphBuilder()
                .input("x", {1, 4, 6, 6})
                .pattern_constant("w", {4, 4, 1, 1})
                .pattern_constant("b", {1, 4, 1, 1}, 2)
                .node("conv2d", {"x", "w"}, "a")
                .node("add", {"a", "b"}, "ab")
                .node("softmax", {"ab"}, "s", {{"axis", 1}})
                .node("conv2d", {"s", "w"}, "y")
                .build({"y"});
  NetworkExecutor ex(g, {2});
  Values inputs = random_graph_inputs(g, 2);
  EXPECT_EQ(compare_outputs(ex.run(inputs).at("y"), interpret(g, inputs).at("y")), "");
  EXPECT_EQ(compare_outputs(ex.run(inputs).at("y"), interpret(g, inputs).at("y")), "");  // and again
}

TEST(NetworkExecutor, TakesATaskProgramFromTheLog) {
  Graph g = small_resnet();
  NetworkTasks nt = extract_tasks(g);
  // A record of the first task: its default schedule, measured.
  Task task = Task::make(nt.tasks[0].workload(), nt.tasks[0].subgraph, Target{});
  const std::string log = write_log("loom_executor_log.json", task, default_schedule(task.dag, 1, 16));
  NetworkExecutor ex(g, {1, log});
  EXPECT_TRUE(ex.kernels()[0].tuned);
  EXPECT_FALSE(ex.kernels()[1].tuned);
  Values inputs = random_graph_inputs(g, 2);
  EXPECT_EQ(compare_outputs(ex.run(inputs).at("y"), interpret(g, inputs).at("y")), "");
  std::remove(log.c_str());
}

// A schedule that reads the conv weight pre-transformed (blocked by a split
// of the output channels): the executor transforms each group's weight once
// and the network still computes what the interpreter computes.
TEST(NetworkExecutor, RunsASchedulePreTransformingItsWeights) {
  Graph g = small_resnet();
  NetworkTasks nt = extract_tasks(g);
  Task task = Task::make(nt.tasks[0].workload(), nt.tasks[0].subgraph, Target{});
  ASSERT_TRUE(task.dag->is_constant("in1"));
  State s = State::initial(task.dag);
  int reader = -1;
  for (size_t i = 0; i < s.stages().size(); ++i)
    if (!s.stages()[i].op->is_placeholder && s.stages()[i].op->body->kind == ExprKind::kReduce) reader = static_cast<int>(i);
  ASSERT_GE(reader, 0);
  const int w = s.stage_index("in1");
  s = s.cache_read(w, BufferScope::kLocal, {reader}).layout_rewrite(w + 1);
  s = s.split(reader + 1, 1, {4});  // output channels 8 = 2 x 4
  const std::string log = write_log("loom_executor_pretransform_log.json", task, s);
  NetworkExecutor ex(g, {1, log});
  EXPECT_TRUE(ex.kernels()[0].tuned);
  EXPECT_EQ(ex.pretransformed_bytes(), 8 * 3 * 3 * 3 * 4);
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

// A 3x3 conv on a 1x3x60000x60000 image: its 107 GiB output cannot be
// allocated on any machine that runs these tests, so the executor refuses
// before allocating, naming the value and its size.
TEST(NetworkExecutor, RefusesANetworkWhoseTensorsCannotFitNamingTheLargest) {
  GraphBuilder b;
  b.input("x", {1, 3, 60000, 60000}).pattern_constant("w", {8, 3, 3, 3});
  b.node("conv2d", {"x", "w"}, "y", {{"pads", {1, 1, 1, 1}}});
  const std::string msg = testing::error_of([&] { NetworkExecutor ex(b.build({"y"}), {1}); });
  EXPECT_NE(msg.find("value 'y' [1x8x60000x60000] is 107.3 GiB"), std::string::npos) << msg;
  EXPECT_NE(msg.find("over the machine's physical memory"), std::string::npos) << msg;
  EXPECT_TRUE(testing::one_line(msg)) << msg;
}

}  // namespace
}  // namespace loom::graph
