// Library-independent parts of the baselines: the measurement protocol.
#include "experiments/baselines/baseline.h"

#include "ir/reference.h"

namespace loom {

BaselineResult measure_baseline(BaselineResult r, const std::function<void()>& run,
                                const std::function<std::vector<float>()>& output,
                                const std::vector<float>& want, const TimingOptions& timing) {
  wait_for_idle_threads();  // another library's workers, still spinning after its calls
  run();
  std::vector<float> got = output();
  r.check = got.size() == want.size()
                ? compare_outputs(got, want)
                : "output has " + std::to_string(got.size()) + " elements, reference " +
                      std::to_string(want.size());
  r.costs_s = time_function(run, timing);
  r.median_s = median(r.costs_s);
  r.supported = true;
  return r;
}

BaselineResult unsupported_baseline(const std::string& library, const std::string& variant,
                                    const std::string& reason) {
  BaselineResult r;
  r.library = library;
  r.variant = variant;
  r.supported = false;
  r.reason = reason;
  return r;
}

}  // namespace loom
