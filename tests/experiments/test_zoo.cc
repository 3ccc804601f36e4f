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
