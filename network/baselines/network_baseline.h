// Whole-network baselines: other engines running the same model file, timed
// in alternating rounds with Loom's executor and checked against
// (network/compare.h). Each engine lives in its own file beside this one
// (pytorch_network, onnxruntime_network); network_baseline.cc lists them once,
// in the order they run and print, with what `compare_network` needs of each.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "network/baselines/pytorch_network.h"  // TorchTensor: a shape and float data

namespace loom {

class NetworkBaseline {
 public:
  virtual ~NetworkBaseline() = default;
  // What ran: the file, the engine's version.
  virtual std::string detail() const = 0;
  // `times` runs back to back of the inputs it was opened with; each one's
  // time in seconds.
  virtual std::vector<double> run(int times) = 0;
  // Returns once the threads the engine keeps spinning after its runs in
  // another process have gone quiet (a bounded wait), so that the next
  // engine timed does not share the cores with them. compare_network waits
  // for this process's own threads (Loom's pool, LibTorch's).
  virtual void wait_until_idle() {}
  // After the timed runs: the outputs Loom's are checked against, in the
  // graph's output order; `against` names them, `warnings` gets what the
  // check should say besides (`tol`: the check's tolerance).
  virtual std::vector<std::vector<float>> reference_outputs(std::string& against, std::vector<std::string>& warnings,
                                                            double tol) = 0;
};

struct NetworkBaselineKind {
  const char* key;   // the `--baselines` name: "torch"
  const char* name;  // as results name it: "PyTorch"
  // The file it runs for MODEL ("" when there is none: it is not run).
  std::string (*file_for)(const std::string& model);
  // "" when it can run here, else why not in one line (the run goes on
  // without it, with that warning).
  std::string (*unavailable_reason)();
  // Loads `file` for the target's threads and feeds it the inputs. Throws
  // LoomError; `optional`: that is a warning and the run goes on without it
  // (a model the engine refuses), else an error.
  std::unique_ptr<NetworkBaseline> (*open)(const std::string& file, int threads, const std::vector<std::string>& names,
                                           const std::vector<TorchTensor>& inputs);
  bool optional;
};

// MODEL's stem + ".pt" when that file exists, else "".
std::string torch_file_for(const std::string& model);
// MODEL itself when it is an ONNX file (ONNX Runtime runs it), else "".
std::string onnx_file_for(const std::string& model);

// The baselines a network runs against, each with the file it runs ("":
// none, it is skipped).
struct NetworkBaselineFile {
  const NetworkBaselineKind* kind;
  std::string file;
};
using NetworkBaselines = std::vector<NetworkBaselineFile>;
// Those of `keys` (every one without), in the list's order, with their files
// for MODEL.
NetworkBaselines network_baselines_for(const std::string& model, const std::vector<std::string>& keys);
NetworkBaselines network_baselines_for(const std::string& model);

// Every network baseline, in the order they run and print.
const std::vector<NetworkBaselineKind>& network_baseline_kinds();
// nullptr if unknown.
const NetworkBaselineKind* find_network_baseline(const std::string& key);
// "torch, ort" (for messages).
std::string network_baseline_keys();

}  // namespace loom
