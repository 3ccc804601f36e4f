// The model zoo at toy size (scripts/make_zoo.py --small): every family a
// user brings — torchvision's classifiers from ResNet to Swin, its
// segmentation heads, PyTorch's transformer layers, a GPT block, a BERT-style
// encoder on token ids, LSTM and GRU models, a U-Net — imports, runs from
// default schedules, and matches both PyTorch's frozen module and ONNX
// Runtime (`loom network run --check`). The full-size zoo runs by
// scripts/zoo_table.sh.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <unistd.h>

#include "tests/experiments/loom_cli.h"
#include "tests/support/scratch_dir.h"

namespace {

namespace fs = std::filesystem;

using loom::testing::run_loom;

fs::path source_root() {
  const char* src = std::getenv("LOOM_SOURCE_DIR");
  return src ? fs::path(src) : fs::path(__FILE__).parent_path().parent_path().parent_path();
}

class Zoo : public ::testing::TestWithParam<const char*> {};

TEST_P(Zoo, ImportsRunsAndMatchesPyTorchAndOnnxRuntime) {
  if (std::system("/usr/bin/python3 -c 'import torch, torchvision, onnx' >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "/usr/bin/python3 lacks torch, torchvision or onnx";
  const std::string name = GetParam();
  const fs::path dir = loom::testing::scratch_dir() / ("loom_zoo_" + name + "_" + std::to_string(getpid()));
  const std::string make = "/usr/bin/python3 " + (source_root() / "scripts" / "make_zoo.py").string() + " " +
                           dir.string() + " --models " + name + " >" + dir.string() + ".log 2>&1";
  ASSERT_EQ(std::system(make.c_str()), 0) << make;
  const auto r = run_loom("network run " + (dir / (name + ".onnx")).string() + " --default-schedules --rounds 1 --check");
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::remove(dir.string() + ".log", ec);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("check output against PyTorch (the frozen module): match"), std::string::npos) << r.output;
  if (loom::testing::onnxruntime_missing().empty())
    EXPECT_NE(r.output.find("check output against ONNX Runtime: match"), std::string::npos) << r.output;
  else
    EXPECT_NE(r.output.find("warning: ONNX Runtime skipped: "), std::string::npos) << r.output;
}

// A recurrent layer's steps each read their row of the input projection in
// place, so that every step is the same task (the row is not part of it),
// and the network's C reads those rows as the executor does.
TEST(ZooRecurrent, EveryStepOfAGruIsOneTaskAndItsExportedCMatchesTheExecutor) {
  if (std::system("/usr/bin/python3 -c 'import torch, torchvision, onnx' >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "/usr/bin/python3 lacks torch, torchvision or onnx";
  const fs::path dir = loom::testing::scratch_dir() / ("loom_zoo_gru_export_" + std::to_string(getpid()));
  const std::string make = "/usr/bin/python3 " + (source_root() / "scripts" / "make_zoo.py").string() + " " +
                           dir.string() + " --models gru_small >/dev/null 2>&1";
  ASSERT_EQ(std::system(make.c_str()), 0) << make;
  // 2 layers of 4 steps (hidden 16, 3 gates): the first step of each layer
  // starts from the zero state, a constant; the last one also stacks the outputs.
  const auto tasks = run_loom("network tasks " + (dir / "gru_small.onnx").string());
  EXPECT_EQ(tasks.exit_code, 0) << tasks.output;
  EXPECT_NE(tasks.output.find("8 distinct tasks"), std::string::npos) << tasks.output;
  EXPECT_NE(tasks.output.find("gemm 1x48                                     0.00      6"), std::string::npos) << tasks.output;
  const std::string config = (dir / "gru.json").string();
  std::ofstream(config) << R"({"network": "gru_small.onnx", "name": "gru", "target": "cpu -threads=1",
                               "search": {"num_trials": 4, "measures_per_round": 4}, "cost_model": {"kind": "random"}})";
  const auto tune = run_loom("tune " + config);
  EXPECT_EQ(tune.exit_code, 0) << tune.output;
  const auto ex = run_loom("export " + config + " --check --rounds 1");
  std::ifstream c(dir / "gru_export" / "gru.c");
  const std::string text((std::istreambuf_iterator<char>(c)), std::istreambuf_iterator<char>());
  std::error_code ec;
  fs::remove_all(dir, ec);
  // Exit 1 may come from the speed of microsecond kernels; only wrong results matter here.
  EXPECT_TRUE(ex.exit_code == 0 || ex.exit_code == 1) << ex.output;
  EXPECT_NE(ex.output.find("the network's C (cc) matches the executor"), std::string::npos) << ex.output;
  EXPECT_NE(text.find("buffers[1] + 48"), std::string::npos) << "no step reads its row of the projection in place";
}

// Every family of make_zoo.py --small.
INSTANTIATE_TEST_SUITE_P(Small, Zoo,
                         ::testing::Values("resnet18_small", "resnet50_small", "resnext50_32x4d_small", "vgg11_small",
                                           "alexnet_small", "densenet121_small", "inception_small",
                                           "mobilenet_v2_small", "mobilenet_v3_large_small", "mnasnet1_0_small",
                                           "shufflenet_v2_x1_0_small", "squeezenet1_1_small", "efficientnet_b0_small",
                                           "regnet_y_400mf_small", "convnext_tiny_small", "vit_b_16_small",
                                           "swin_t_small", "fcn_resnet50_small", "deeplabv3_mobilenet_v3_large_small",
                                           "lraspp_mobilenet_v3_large_small", "transformer_encoder_small",
                                           "transformer_decoder_small", "gpt_block_small", "bert_encoder_small",
                                           "lstm_small", "gru_small", "unet_small"),
                         [](const ::testing::TestParamInfo<const char*>& info) { return std::string(info.param); });

}  // namespace
