// Transfer evaluation: every task shape (or machine kind) is held out once
// and ranked by a model trained on the others; a rule shared by all tasks
// carries over to an unseen one.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "costmodel/transfer_eval.h"
#include "ir/error.h"
#include "tests/support/matmul_schedules.h"

namespace loom {
namespace {

// Matmul schedules of one shape whose cost follows the same known rule on
// every shape: wider vectors, larger register tiles and a reduction tile
// near 8 are faster.
std::vector<TrainingRecord> matmul_records(int64_t M, int64_t N, int64_t K, const std::string& target, size_t n,
                                           uint64_t seed, const MachineKind& machine = {}) {
  auto task = std::make_shared<const Task>(Task::make("matmul", {{"M", M}, {"N", N}, {"K", K}}, Target::parse(target)));
  std::vector<MatmulTiles> tiles;
  auto states = random_matmul_states(task->dag, M, N, K, n, seed, &tiles);
  std::vector<TrainingRecord> out;
  for (size_t i = 0; i < states.size(); ++i) {
    const auto& t = tiles[i];
    double gflops = 1 + 2 * std::log2(static_cast<double>(t.j[2])) + std::log2(static_cast<double>(t.i[2] * t.j[1])) -
                    0.5 * std::fabs(std::log2(static_cast<double>(t.k)) - 3);
    out.push_back({task, states[i], 1.0 / std::max(0.1, gflops), machine});
  }
  return out;
}

void append(std::vector<TrainingRecord>* to, const std::vector<TrainingRecord>& from) {
  to->insert(to->end(), from.begin(), from.end());
}

TransferOptions xgb_options() {
  TransferOptions o;
  o.model = "xgb";
  o.settings = {{"max_rounds", 40}, {"max_train_seconds", 60}};
  return o;
}

TEST(TransferEval, EveryTaskShapeIsHeldOutOnceAndTheSharedRuleCarriesOver) {
  std::vector<TrainingRecord> records;
  append(&records, matmul_records(64, 64, 64, "cpu -threads=1", 150, 1));
  append(&records, matmul_records(32, 128, 64, "cpu -threads=1", 150, 2));
  append(&records, matmul_records(128, 32, 32, "cpu -threads=1", 150, 3));
  // The first shape at another thread count: the same shape, held out with it.
  append(&records, matmul_records(64, 64, 64, "cpu -threads=2", 150, 4));
  TransferReport rep = evaluate_transfer(records, xgb_options());
  EXPECT_EQ(rep.units, 3);
  EXPECT_EQ(rep.folds, 3) << "folds = 0: one per unit";
  ASSERT_EQ(rep.groups.size(), 4u) << "each task on its own";
  std::set<int> folds_of_64;
  for (const auto& g : rep.groups)
    if (g.name.find("M=64 N=64") != std::string::npos) folds_of_64.insert(g.fold);
  EXPECT_EQ(folds_of_64.size(), 1u) << "a shape's thread counts are held out together";
  EXPECT_EQ(rep.overall.num_programs, records.size());
  for (const auto& g : rep.groups) EXPECT_GT(g.metrics.pairwise_accuracy, 0.75) << g.name;
  EXPECT_GT(rep.overall.pairwise_accuracy, 0.8);
  EXPECT_LE(rep.min_pairwise, rep.mean_pairwise);
}

TEST(TransferEval, TrainOnlyRecordsTrainTheOtherTasksFoldsAndAreNeverRanked) {
  std::vector<TrainingRecord> ranked, train_only;
  append(&ranked, matmul_records(64, 64, 64, "cpu -threads=1", 30, 1));
  append(&ranked, matmul_records(32, 128, 64, "cpu -threads=1", 30, 2));
  append(&train_only, matmul_records(64, 64, 64, "cpu -threads=1", 20, 3));
  append(&train_only, matmul_records(32, 128, 64, "cpu -threads=1", 20, 4));
  append(&train_only, matmul_records(128, 32, 32, "cpu -threads=1", 25, 5));  // a task only trained on
  std::vector<std::string> lines;
  TransferReport rep =
      evaluate_transfer(ranked, xgb_options(), [&](const std::string& l) { lines.push_back(l); }, train_only);
  EXPECT_EQ(rep.units, 2) << "only ranked tasks are held out";
  ASSERT_EQ(rep.groups.size(), 2u);
  EXPECT_EQ(rep.overall.num_programs, ranked.size());
  ASSERT_EQ(lines.size(), 2u);
  // Each fold: the other task's 30 ranked and 20 train-only programs and the
  // third task's 25; the held-out task's own 20 train-only programs do not train.
  for (const auto& l : lines) EXPECT_NE(l.find("trained on 75,"), std::string::npos) << l;
}

TEST(TransferEval, FoldsGroupSeveralUnits) {
  std::vector<TrainingRecord> records;
  for (int i = 0; i < 4; ++i) append(&records, matmul_records(16 << (i % 2), 32, 16 << (i / 2), "cpu -threads=1", 20, i));
  TransferOptions o = xgb_options();
  o.folds = 2;
  TransferReport rep = evaluate_transfer(records, o);
  EXPECT_EQ(rep.units, 4);
  EXPECT_EQ(rep.folds, 2);
  std::set<int> folds;
  for (const auto& g : rep.groups) folds.insert(g.fold);
  EXPECT_EQ(folds, (std::set<int>{0, 1}));
}

TEST(TransferEval, OneTaskShapeLeavesNothingToHoldOutAgainst) {
  auto records = matmul_records(32, 32, 32, "cpu -threads=1", 10, 1);
  append(&records, matmul_records(32, 32, 32, "cpu -threads=2", 10, 2));
  try {
    evaluate_transfer(records, xgb_options());
    FAIL() << "expected an error";
  } catch (const LoomError& e) {
    EXPECT_NE(std::string(e.what()).find("1 task shape ("), std::string::npos) << e.what();
  }
}

TEST(TransferEval, ByMachineHoldsOutEachMachineKind) {
  MachineKind a{"CPU A", "avx512", 2, ""}, b{"CPU B", "avx2", 4, ""};
  std::vector<TrainingRecord> records;
  append(&records, matmul_records(64, 64, 64, "cpu -threads=1", 120, 1, a));
  append(&records, matmul_records(64, 64, 64, "cpu -threads=1", 120, 2, b));
  TransferOptions o = xgb_options();
  o.unit = TransferUnit::kMachine;
  TransferReport rep = evaluate_transfer(records, o);
  EXPECT_EQ(rep.units, 2);
  ASSERT_EQ(rep.groups.size(), 2u) << "one task, ranked separately on each machine";
  EXPECT_NE(rep.groups[0].fold, rep.groups[1].fold);
  for (const auto& g : rep.groups) EXPECT_NE(g.name.find(" on CPU "), std::string::npos) << g.name;
  // The records name one machine only: the machine protocol cannot run.
  auto one = matmul_records(64, 64, 64, "cpu -threads=1", 10, 1, a);
  EXPECT_THROW(evaluate_transfer(one, o), LoomError);
}

// By network: each network (its tasks, weighted) is held out once; its
// top-k score is the weighted best latency over the weighted best of the
// model's top k, 1 when the picks hold every task's best.
TEST(TransferEval, ByNetworkScoresEachHeldOutNetworksTopKPicks) {
  std::vector<TrainingRecord> a1 = matmul_records(64, 64, 64, "cpu -threads=1", 120, 1);
  std::vector<TrainingRecord> a2 = matmul_records(32, 128, 64, "cpu -threads=1", 120, 2);
  std::vector<TrainingRecord> b1 = matmul_records(128, 32, 32, "cpu -threads=1", 120, 3);
  std::vector<TrainingRecord> records;
  for (const auto* v : {&a1, &a2, &b1}) append(&records, *v);
  TransferOptions o = xgb_options();
  o.unit = TransferUnit::kNetwork;
  o.k = 5;
  o.networks.network_of_task = {{a1[0].task->key(), "net_a"}, {a2[0].task->key(), "net_a"}, {b1[0].task->key(), "net_b"}};
  o.networks.weight_of_task = {{a1[0].task->key(), 2.0}, {a2[0].task->key(), 1.0}, {b1[0].task->key(), 1.0}};
  TransferReport rep = evaluate_transfer(records, o);
  EXPECT_EQ(rep.units, 2);
  ASSERT_EQ(rep.networks.size(), 2u);
  EXPECT_EQ(rep.networks[0].name, "net_a");
  EXPECT_EQ(rep.networks[0].tasks, 2);
  EXPECT_EQ(rep.networks[1].tasks, 1);
  for (const auto& n : rep.networks) {
    EXPECT_GT(n.top1, 0.5) << n.name;  // the rule carries over
    EXPECT_LE(n.top1, 1.0) << n.name;
    EXPECT_GE(n.topk, n.top1) << n.name;
    EXPECT_LE(n.topk, 1.0) << n.name;
  }
}

TEST(TransferEval, ByNetworkNeedsTwoNetworks) {
  std::vector<TrainingRecord> records = matmul_records(64, 64, 64, "cpu -threads=1", 20, 1);
  TransferOptions o = xgb_options();
  o.unit = TransferUnit::kNetwork;
  o.networks.network_of_task = {{records[0].task->key(), "only"}};
  try {
    evaluate_transfer(records, o);
    FAIL() << "expected a LoomError";
  } catch (const LoomError& e) {
    EXPECT_NE(std::string(e.what()).find("1 network (only): holding one out needs at least two"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace loom
