// The MLP cost model. The only translation unit that includes LibTorch.
//
// Network: per statement row, standardized features -> `layers` x
// (Linear(hidden) + ReLU + dropout while training) -> Linear(1); a program's
// score is the sum of its rows' outputs (programs are sets of statements of
// varying size), plus a program head: the sum of the rows' last hidden
// vectors -> `head_layers` x (Linear(hidden) + ReLU) -> Linear(1), which
// can weigh statements against each other (a sum of per-statement scores
// cannot: see the interaction test in tests/costmodel). The model is an
// ensemble of `members` such networks, each initialized from its own seed
// and early-stopped on its own validation share; its score is their mean.
// On 5,040 measured programs one network ranks 0.005-0.01 worse than the
// mean of five (its early stopping picks a lucky epoch on a few hundred
// programs; averaging cancels that), and together the members train on
// every program.
//
// Training (fit): labels are normalized throughput in [0, 1] per task. Loss =
// pairwise logistic rank loss over all pairs of programs of the same task
// inside a minibatch whose labels differ (log(1 + exp(-(s_i - s_j))) for
// y_i > y_j), + mse_weight x MSE(score, label) to keep the scale anchored.
// Adam; early stopping on the pairwise accuracy of a held-out fraction of the
// programs (the best weights are restored, or their mean with the
// neighbouring epochs' when that ranks the held-out programs better: weight
// averaging, as in stochastic weight averaging); every fit is bounded by
// max_train_seconds, shared by the members in turn (one that stops early
// leaves its time to the next). The feature standardization (mean/std per
// feature) is recomputed on all programs at every fit, and the first layer
// of every network is re-parametrized to match (W' = W diag(s_old/s_new),
// b' = b + W ((m_new - m_old) s_old)), so a warm start continues from the
// same function of the features while the clipping range follows the data.
//
// Inference (predict) runs on a frozen copy of the weights in plain C++
// (mlp_inference.h), not in LibTorch.
#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <random>

#include "costmodel/blas_kernels.h"
#include "costmodel/metrics.h"
#include "costmodel/mlp_inference.h"
#include "costmodel/mlp_model.h"
#include "ir/error.h"

namespace loom {

namespace {

struct NetImpl : torch::nn::Module {
  NetImpl(int in, int hidden, int layers, int head_layers, double dropout, double input_clip)
      : dropout(dropout), input_clip(input_clip) {
    int prev = in;
    for (int i = 0; i < layers; ++i) {
      fc.push_back(register_module("fc" + std::to_string(i), torch::nn::Linear(prev, hidden)));
      prev = hidden;
    }
    out = register_module("out", torch::nn::Linear(prev, 1));
    for (int i = 0; i < head_layers; ++i)
      head.push_back(register_module("head" + std::to_string(i), torch::nn::Linear(prev, prev)));
    if (head_layers > 0) head_out = register_module("head_out", torch::nn::Linear(prev, 1));
    mean = register_buffer("mean", torch::zeros({in}));
    inv_std = register_buffer("inv_std", torch::ones({in}));
  }
  // Rows -> the sum of their outputs per program (seg: each row's program),
  // plus, with a head, the head's output on the sum of the rows' last hidden
  // vectors (the statements of a program seen together).
  // Rows are standardized and clipped first.
  torch::Tensor forward(torch::Tensor x, const torch::Tensor& seg, int64_t num_programs) {
    x = (x - mean) * inv_std;
    if (input_clip > 0) x = torch::clamp(x, -input_clip, input_clip);
    torch::Tensor scores = torch::zeros({num_programs});
    if (x.size(0) == 0) return scores;
    for (auto& l : fc) x = torch::dropout(torch::relu(l->forward(x)), dropout, is_training());
    scores = scores.index_add(0, seg, out->forward(x).squeeze(1));
    if (head.empty()) return scores;
    torch::Tensor h = torch::zeros({num_programs, x.size(1)}).index_add(0, seg, x);
    for (auto& l : head) h = torch::relu(l->forward(h));
    return scores + head_out->forward(h).squeeze(1);
  }
  std::vector<torch::nn::Linear> fc, head;
  torch::nn::Linear out{nullptr}, head_out{nullptr};
  torch::Tensor mean, inv_std;
  double dropout, input_clip;
};
TORCH_MODULE(Net);

// Rows of a set of programs packed for one forward pass.
struct Packed {
  torch::Tensor rows;  // [R, F]
  torch::Tensor seg;   // [R] program position of each row
  int64_t num_programs = 0;
};

Packed pack(const std::vector<ProgramFeatures>& programs, const std::vector<size_t>& which) {
  size_t r = 0;
  for (size_t i : which) r += programs[i].valid ? programs[i].num_stmts : 0;
  Packed p;
  p.num_programs = static_cast<int64_t>(which.size());
  p.rows = torch::empty({static_cast<int64_t>(r), kNumFeatures});
  p.seg = torch::empty({static_cast<int64_t>(r)}, torch::kLong);
  float* dst = p.rows.data_ptr<float>();
  int64_t* seg = p.seg.data_ptr<int64_t>();
  for (size_t k = 0; k < which.size(); ++k) {
    const ProgramFeatures& f = programs[which[k]];
    if (!f.valid || f.num_stmts == 0) continue;
    std::memcpy(dst, f.values.data(), f.values.size() * sizeof(float));
    dst += f.values.size();
    for (int s = 0; s < f.num_stmts; ++s) *seg++ = static_cast<int64_t>(k);
  }
  return p;
}

class MlpModel : public CostModel {
 public:
  explicit MlpModel(const MlpSettings& s) : s_(s), rng_(static_cast<uint64_t>(s.seed)) {
    select_openblas_kernels();  // LibTorch's matrix products run in OpenBLAS
    for (int m = 0; m < s.members; ++m) {
      torch::manual_seed(static_cast<uint64_t>(s.seed + m));
      // Initialized under its seed.
      nets_.push_back(Net(kNumFeatures, s.hidden, s.layers, s.head_layers, s.dropout, s.input_clip));
    }
    frozen_ = freeze();
  }

  std::string name() const override { return "mlp"; }
  nlohmann::json settings_json() const override { return s_.to_json(); }

  // Scored by the frozen copy of the weights (mlp_inference.h), made again
  // after every change of the weights (so scoring only reads); LibTorch's
  // forward is the reference it is tested against (libtorch_scores).
  std::vector<float> predict_features(const std::vector<ProgramFeatures>& programs) override {
    std::vector<float> out = mlp_scores(frozen_, programs);
    for (size_t i = 0; i < programs.size(); ++i)
      if (!programs[i].valid) out[i] = kInvalidProgramScore;
    return out;
  }

  // LibTorch's OpenMP threads and OpenBLAS's, both the model's setting.
  void use_own_threads() const {
    torch::set_num_threads(s_.threads);
    set_openblas_threads(s_.threads);
  }

  std::vector<float> libtorch_scores(const std::vector<ProgramFeatures>& programs) {
    use_own_threads();
    torch::NoGradGuard no_grad;
    std::vector<size_t> all(programs.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = i;
    Packed p = pack(programs, all);
    torch::Tensor scores = torch::zeros({p.num_programs});
    for (auto& net : nets_) {
      net->eval();
      scores += net->forward(p.rows, p.seg, p.num_programs);
    }
    scores = (scores / static_cast<double>(nets_.size())).contiguous();
    std::vector<float> out(scores.data_ptr<float>(), scores.data_ptr<float>() + programs.size());
    for (size_t i = 0; i < programs.size(); ++i)
      if (!programs[i].valid) out[i] = kInvalidProgramScore;
    return out;
  }

  void fit(const std::vector<ProgramFeatures>& programs, const std::vector<float>& labels,
           const std::vector<int>& groups) override {
    using Clock = std::chrono::steady_clock;
    auto start = Clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
    use_own_threads();

    std::vector<size_t> usable;
    for (size_t i = 0; i < programs.size(); ++i)
      if (programs[i].valid && programs[i].num_stmts > 0) usable.push_back(i);
    if (usable.size() < 2) return;
    standardize(programs, usable);
    std::string summary;
    for (size_t m = 0; m < nets_.size(); ++m) {
      const double budget = s_.max_train_seconds * static_cast<double>(m + 1) / static_cast<double>(nets_.size());
      summary += (m ? "; " : "") + fit_member(nets_[m], static_cast<uint64_t>(s_.seed) + m, programs, labels,
                                               groups, usable, [&] { return elapsed() >= budget; });
    }
    char total[64];
    std::snprintf(total, sizeof total, " (%.1f s)", elapsed());
    last_fit_summary_ = summary + total;
    frozen_ = freeze();
  }

 protected:
  std::string serialize() const override {
    std::string out;
    auto put = [&](const void* p, size_t n) { out.append(static_cast<const char*>(p), n); };
    uint64_t std_flag = standardized_ ? 1 : 0;
    put(&std_flag, sizeof std_flag);
    for (const auto& t : tensors()) {
      torch::Tensor c = t.detach().contiguous();
      uint64_t n = static_cast<uint64_t>(c.numel());
      put(&n, sizeof n);
      put(c.data_ptr<float>(), n * sizeof(float));
    }
    return out;
  }

  void deserialize(const std::string& p) override {
    size_t pos = 0;
    auto get = [&](void* dst, size_t n) {
      if (pos + n > p.size()) throw LoomError("mlp model: truncated payload");
      std::memcpy(dst, p.data() + pos, n);
      pos += n;
    };
    uint64_t std_flag = 0;
    get(&std_flag, sizeof std_flag);
    torch::NoGradGuard no_grad;
    for (auto& t : tensors()) {
      uint64_t n = 0;
      get(&n, sizeof n);
      if (n != static_cast<uint64_t>(t.numel()))
        throw LoomError("mlp model: payload does not match the network shape in its settings");
      std::vector<float> v(n);
      get(v.data(), n * sizeof(float));
      t.copy_(torch::from_blob(v.data(), t.sizes()));
    }
    standardized_ = std_flag != 0;
    for (auto& net : nets_) net->eval();
    frozen_ = freeze();
  }

 private:
  template <typename OutOfTime>
  std::string fit_member(Net& net, uint64_t seed, const std::vector<ProgramFeatures>& programs,
                         const std::vector<float>& labels, const std::vector<int>& groups,
                         const std::vector<size_t>& usable, OutOfTime out_of_time) {
    // Dropout masks come from LibTorch's global generator: seeded here, so a
    // fit depends only on the settings and its data.
    torch::manual_seed(seed);
    // Hold out programs for early stopping (only when there are enough); each
    // member holds out a different share.
    std::vector<size_t> train, valid;
    stable_split(usable, usable.size() >= 20 ? s_.valid_fraction : 0.0, seed, &train, &valid);
    Packed vpack = pack(programs, valid);
    std::vector<float> vlabels;
    std::vector<int> vgroups;
    for (size_t i : valid) vlabels.push_back(labels[i]), vgroups.push_back(groups[i]);

    torch::optim::Adam opt(net->parameters(),
                           torch::optim::AdamOptions(s_.learning_rate).weight_decay(s_.weight_decay));
    double best_acc = -1;
    std::vector<torch::Tensor> best;
    int since_best = 0;
    if (!valid.empty()) {
      best_acc = valid_accuracy(net, vpack, vlabels, vgroups);
      best = snapshot(net);
    }
    const double initial_acc = best_acc;
    int best_epoch = 0, epochs = 0;
    // The weights after each of the last epochs (for weight averaging): the
    // best epoch and `average_epochs` on each side of it stay in the window,
    // since training stops `patience` epochs after the best.
    std::deque<std::pair<int, std::vector<torch::Tensor>>> recent;
    const size_t window = static_cast<size_t>(s_.average_epochs > 0 ? s_.patience + s_.average_epochs + 1 : 0);
    const size_t bs = static_cast<size_t>(s_.batch_programs);
    for (int epoch = 0; epoch < s_.max_epochs && !out_of_time(); ++epoch) {
      epochs = epoch + 1;
      net->train();
      std::shuffle(train.begin(), train.end(), rng_);
      for (size_t b = 0; b < train.size() && !out_of_time(); b += bs) {
        std::vector<size_t> batch(train.begin() + b, train.begin() + std::min(train.size(), b + bs));
        if (batch.size() < 2) continue;
        std::vector<float> y;
        std::vector<int64_t> g;
        for (size_t i : batch) y.push_back(labels[i]), g.push_back(groups[i]);
        torch::Tensor yt = torch::from_blob(y.data(), {static_cast<int64_t>(y.size())}).clone();
        torch::Tensor gt = torch::from_blob(g.data(), {static_cast<int64_t>(g.size())}, torch::kLong).clone();
        Packed bp = pack(programs, batch);
        torch::Tensor s = net->forward(bp.rows, bp.seg, bp.num_programs);
        torch::Tensor diff = s.unsqueeze(1) - s.unsqueeze(0);
        torch::Tensor mask = (gt.unsqueeze(1) == gt.unsqueeze(0)).logical_and(yt.unsqueeze(1) > yt.unsqueeze(0))
                                 .to(torch::kFloat);
        torch::Tensor loss =
            (torch::softplus(-diff) * mask).sum() / torch::clamp_min(mask.sum(), 1.0) +
            s_.mse_weight * torch::mse_loss(s, yt);
        opt.zero_grad();
        loss.backward();
        opt.step();
      }
      if (valid.empty()) continue;
      if (window) {
        recent.emplace_back(epoch + 1, snapshot(net));
        if (recent.size() > window) recent.pop_front();
      }
      double acc = valid_accuracy(net, vpack, vlabels, vgroups);
      if (acc > best_acc + 1e-6) {
        best_acc = acc, best = snapshot(net), since_best = 0, best_epoch = epoch + 1;
      } else if (++since_best >= s_.patience) {
        break;
      }
    }
    if (!best.empty()) restore(net, best);
    bool averaged = false;
    if (window && best_epoch > 0) {
      std::vector<torch::Tensor> mean;
      int n = 0;
      for (const auto& [e, w] : recent) {
        if (std::abs(e - best_epoch) > s_.average_epochs) continue;
        if (mean.empty()) {
          for (const auto& t : w) mean.push_back(t.clone());
        } else {
          for (size_t i = 0; i < w.size(); ++i) mean[i] += w[i];
        }
        ++n;
      }
      if (n > 1) {
        for (auto& t : mean) t /= static_cast<double>(n);
        restore(net, mean);
        double acc = valid_accuracy(net, vpack, vlabels, vgroups);
        if (acc > best_acc) best_acc = acc, averaged = true;
        else restore(net, best);
      }
    }
    net->eval();
    char summary[256];
    if (valid.empty())
      std::snprintf(summary, sizeof summary, "%d epochs, no validation (%zu train programs)", epochs, train.size());
    else
      std::snprintf(summary, sizeof summary,
                    "%d epochs, weights of epoch %d%s kept, validation pairwise %.3f -> %.3f (%zu train, %zu "
                    "validation programs)",
                    epochs, best_epoch, averaged ? " (averaged with its neighbours)" : "", initial_acc, best_acc,
                    train.size(), valid.size());
    return summary;
  }

  double valid_accuracy(Net& net, const Packed& vpack, const std::vector<float>& y, const std::vector<int>& g) {
    torch::NoGradGuard no_grad;
    net->eval();
    torch::Tensor s = net->forward(vpack.rows, vpack.seg, vpack.num_programs).contiguous();
    std::vector<float> sv(s.data_ptr<float>(), s.data_ptr<float>() + s.numel());
    return pairwise_accuracy(sv, y, g);
  }

  void standardize(const std::vector<ProgramFeatures>& programs, const std::vector<size_t>& idx) {
    torch::NoGradGuard no_grad;
    torch::Tensor rows = pack(programs, idx).rows;
    torch::Tensor mean = rows.mean(0);
    torch::Tensor inv_std = 1.0 / torch::clamp_min(rows.std(0, /*unbiased=*/false), 1e-3);
    for (auto& net : nets_) {
      if (standardized_) {
        // x_old = x_new * (s_old / s_new) + (m_new - m_old) * s_old, with
        // s = inv_std: the first layer absorbs the change.
        auto& first = net->fc.front();
        torch::Tensor scale = net->inv_std / inv_std;
        torch::Tensor shift = (mean - net->mean) * net->inv_std;
        first->bias.add_(torch::matmul(first->weight, shift));
        first->weight.mul_(scale.unsqueeze(0));
      }
      net->mean.copy_(mean);
      net->inv_std.copy_(inv_std);
    }
    standardized_ = true;
  }

  // Per network: parameters then buffers, in registration order (the payload order).
  std::vector<torch::Tensor> tensors() const {
    std::vector<torch::Tensor> t;
    for (const auto& net : nets_) {
      for (const auto& p : net->parameters()) t.push_back(p);
      for (const auto& b : net->buffers()) t.push_back(b);
    }
    return t;
  }
  static std::vector<torch::Tensor> snapshot(const Net& net) {
    std::vector<torch::Tensor> s;
    for (const auto& t : net->parameters()) s.push_back(t.detach().clone());
    return s;
  }
  static void restore(Net& net, const std::vector<torch::Tensor>& s) {
    torch::NoGradGuard no_grad;
    auto params = net->parameters();
    for (size_t i = 0; i < params.size(); ++i) params[i].copy_(s[i]);
  }

  static FrozenLinear freeze(const torch::nn::Linear& l) {
    torch::Tensor w = l->weight.detach().contiguous(), b = l->bias.detach().contiguous();
    return FrozenLinear::from_out_by_in(static_cast<int>(w.size(0)), static_cast<int>(w.size(1)),
                                        w.data_ptr<float>(), b.data_ptr<float>());
  }
  FrozenMlp freeze() const {
    // Every member has the standardization of the last fit (standardize
    // sets them together), so the frozen copy keeps one.
    const Net& first = nets_.front();
    for (const auto& net : nets_)
      if (net->input_clip != first->input_clip || !torch::equal(net->mean, first->mean) ||
          !torch::equal(net->inv_std, first->inv_std))
        throw LoomError("mlp model: its networks differ in their input standardization");
    FrozenMlp f;
    torch::Tensor mean = first->mean.contiguous(), inv_std = first->inv_std.contiguous();
    f.mean.assign(mean.data_ptr<float>(), mean.data_ptr<float>() + mean.numel());
    f.inv_std.assign(inv_std.data_ptr<float>(), inv_std.data_ptr<float>() + inv_std.numel());
    f.input_clip = first->input_clip;
    for (const auto& net : nets_) {
      FrozenNet n;
      for (const auto& l : net->fc) n.hidden.push_back(freeze(l));
      n.out = freeze(net->out);
      for (const auto& l : net->head) n.head.push_back(freeze(l));
      if (!net->head.empty()) n.head_out = freeze(net->head_out);
      f.nets.push_back(std::move(n));
    }
    return f;
  }

  MlpSettings s_;
  std::vector<Net> nets_;
  FrozenMlp frozen_;
  std::mt19937_64 rng_;
  bool standardized_ = false;
};

}  // namespace

std::unique_ptr<CostModel> make_mlp_model(const MlpSettings& settings) {
  return std::make_unique<MlpModel>(settings);
}

std::vector<float> mlp_libtorch_scores(CostModel& mlp, const std::vector<ProgramFeatures>& programs) {
  auto* m = dynamic_cast<MlpModel*>(&mlp);
  if (m == nullptr) throw LoomError("mlp_libtorch_scores: the model is '" + mlp.name() + "', not mlp");
  return m->libtorch_scores(programs);
}

}  // namespace loom
