// oneDNN baselines: the variant machinery (run_spec), softmax, norm, and the
// dispatcher run_onednn_baselines. Primitive creation and weight prepacking
// happen outside the timed region; see onednn_util.h for the variants.
#include <cmath>
#include <limits>
#include <stdexcept>
#include <unordered_map>

#include "experiments/baselines/onednn_util.h"

namespace loom {
namespace onednn {

memory::desc plain(const dims& d) {
  dims st(d.size(), 1);
  for (size_t i = d.size(); i-- > 1;) st[i - 1] = st[i] * d[i];
  return memory::desc(d, dt::f32, st);
}

memory::desc strided(const dims& d, const dims& strides) { return memory::desc(d, dt::f32, strides); }

dnnl::primitive_attr relu_attr() {
  dnnl::post_ops po;
  po.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
  dnnl::primitive_attr attr;
  attr.set_post_ops(po);
  return attr;
}

namespace {

void fill(memory& m, const std::vector<float>& v) {
  std::memcpy(m.get_data_handle(), v.data(), v.size() * sizeof(float));
}

std::vector<float> read_all(const memory& m) {
  const float* p = static_cast<const float*>(m.get_data_handle());
  return std::vector<float>(p, p + m.get_desc().get_size() / sizeof(float));
}

memory::desc any_like(const memory::desc& d) { return memory::desc(d.dims(), dt::f32, tag::any); }

struct VariantConfig {
  std::string name;
  bool act_any;      // activations/outputs format_tag::any
  bool weight_any;   // weights format_tag::any (prepacked outside timing)
  bool timed_reorders;
};

}  // namespace

std::vector<BaselineResult> run_spec(const Spec& spec, const TimingOptions& timing,
                                     const std::vector<float>& want) {
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream s(eng);
  const size_t n = spec.ops.size();
  std::vector<memory> user(n);
  for (size_t i = 0; i < n; ++i) {
    if (spec.ops[i].role == Role::kOutput) continue;
    if (spec.ops[i].data.size() * sizeof(float) != spec.ops[i].user.get_size()) {
      throw std::logic_error("oneDNN baseline: operand " + std::to_string(i) + " holds " +
                             std::to_string(spec.ops[i].data.size()) + " values, its descriptor " +
                             std::to_string(spec.ops[i].user.get_size() / sizeof(float)));
    }
    user[i] = memory(spec.ops[i].user, eng);
    fill(user[i], spec.ops[i].data);
  }

  std::vector<BaselineResult> out;
  auto measure = [&](const VariantConfig& vc, bool* same_as_user, bool skip_if_same) {
    std::vector<memory::desc> mds(n);
    for (size_t i = 0; i < n; ++i) {
      bool any = spec.ops[i].role == Role::kWeight ? vc.weight_any : vc.act_any;
      mds[i] = any ? any_like(spec.ops[i].user) : spec.ops[i].user;
    }
    dnnl::primitive_desc pd;
    try {
      pd = spec.make(eng, mds);
    } catch (const dnnl::error& e) {
      out.push_back(unsupported_baseline("onednn", vc.name, std::string("oneDNN: ") + e.what()));
      return;
    }
    dnnl::primitive prim(pd);
    // Memories in the primitive's layouts; reorders where they differ.
    std::vector<memory> pm(n);
    std::vector<dnnl::reorder> pre, post;  // timed (or not) activation reorders
    std::vector<std::pair<memory, memory>> pre_mem, post_mem;
    memory out_user;
    bool same = true;
    bool prepacked = false;  // a weight reordered once, outside the timing
    for (size_t i = 0; i < n; ++i) {
      const Operand& op = spec.ops[i];
      memory::desc md = pd.query_md(dnnl::query::exec_arg_md, op.arg);
      if (op.role == Role::kOutput) {
        out_user = memory(op.user, eng);
        float nan = std::numeric_limits<float>::quiet_NaN();
        std::vector<float> nans(op.user.get_size() / sizeof(float), nan);
        fill(out_user, nans);
      }
      memory um = op.role == Role::kOutput ? out_user : user[i];
      if (md == op.user) {
        pm[i] = um;
        continue;
      }
      pm[i] = memory(md, eng);
      if (op.role == Role::kWeight) {  // prepacked once, outside the timing
        dnnl::reorder(um, pm[i]).execute(s, um, pm[i]);
        s.wait();
        prepacked = true;
        continue;
      }
      same = false;
      if (op.role == Role::kOutput) {
        post.emplace_back(pm[i], um);
        post_mem.emplace_back(pm[i], um);
      } else {
        pre.emplace_back(um, pm[i]);
        pre_mem.emplace_back(um, pm[i]);
      }
    }
    if (same_as_user) *same_as_user = same;
    if (same && skip_if_same) return;
    if (!same && !vc.act_any) {
      out.push_back(unsupported_baseline("onednn", vc.name, "primitive changed the given layouts"));
      return;
    }
    std::unordered_map<int, memory> args;
    for (size_t i = 0; i < n; ++i) args[spec.ops[i].arg] = pm[i];
    auto run_pre = [&] {
      for (size_t i = 0; i < pre.size(); ++i) pre[i].execute(s, pre_mem[i].first, pre_mem[i].second);
    };
    auto run_post = [&] {
      for (size_t i = 0; i < post.size(); ++i) post[i].execute(s, post_mem[i].first, post_mem[i].second);
    };
    if (!vc.timed_reorders) {
      run_pre();
      s.wait();
    }
    BaselineResult r;
    r.library = "onednn";
    r.variant = vc.name;
    r.impl = pd.impl_info_str();
    r.inputs_as_given = !prepacked && (vc.timed_reorders || (pre.empty() && post.empty()));
    std::function<void()> run;
    if (vc.timed_reorders) {
      run = [&] {
        run_pre();
        prim.execute(s, args);
        run_post();
        s.wait();
      };
    } else {
      run = [&] {
        prim.execute(s, args);
        s.wait();
      };
    }
    auto output = [&] {
      if (!vc.timed_reorders) {
        run_post();
        s.wait();
      }
      return read_all(out_user);
    };
    out.push_back(measure_baseline(r, run, output, want, timing));
  };

  const std::string& L = spec.layout;
  const std::string& Wn = spec.weight_name;
  if (spec.plain_weight_variant) measure({L + " direct, plain " + Wn, false, false, true}, nullptr, false);
  const size_t direct_at = out.size();
  measure({L + " direct" + (spec.plain_weight_variant ? ", " + Wn + " prepacked" : ""), false, true, true},
          nullptr, false);
  if (!spec.any_activations) {
    if (out.size() > direct_at && out[direct_at].supported) out[direct_at].variant += " (only layout)";
    return out;
  }
  const bool direct_ok = out.size() > direct_at && out[direct_at].supported;
  bool same = false;
  measure({L + " in/out, reorders timed", true, true, true}, &same, direct_ok);
  if (same && direct_ok) {
    // oneDNN prefers the workload's own layouts: the other two variants
    // would be the direct one again.
    out[direct_at].variant += " (= preferred)";
    return out;
  }
  measure({"preferred layouts, reorders outside", true, true, false}, nullptr, false);
  return out;
}

namespace {

std::vector<BaselineResult> softmax(const Task& task, const TimingOptions& timing, const TensorMap& in,
                                    const TensorMap& ref) {
  const int64_t M = param(task, "M"), N = param(task, "N");
  Spec sp;
  sp.layout = "row-major";
  sp.any_activations = false;  // softmax takes no format_tag::any source
  sp.ops = {{DNNL_ARG_SRC, plain({M, N}), Role::kActivation, in.at("X")},
            {DNNL_ARG_DST, plain({M, N}), Role::kOutput, {}}};
  sp.make = [](const dnnl::engine& eng, const std::vector<memory::desc>& d) -> dnnl::primitive_desc {
    dnnl::softmax_v2_forward::desc desc(dnnl::prop_kind::forward_inference,
                                        dnnl::algorithm::softmax_accurate, d[0], d[1], 1);
    return dnnl::softmax_v2_forward::primitive_desc(desc, eng);
  };
  return run_spec(sp, timing, ref.at("softmax"));
}

std::vector<BaselineResult> norm(const Task& task, const TimingOptions& timing, const TensorMap& in,
                                 const TensorMap& ref) {
  const int64_t M = param(task, "M"), N = param(task, "N");
  Spec sp;
  sp.layout = "row-major";
  sp.any_activations = false;  // reduction takes no format_tag::any source
  sp.ops = {{DNNL_ARG_SRC, plain({M, N}), Role::kActivation, in.at("A")},
            {DNNL_ARG_DST, plain({1, 1}), Role::kOutput, {}}};
  sp.make = [](const dnnl::engine& eng, const std::vector<memory::desc>& d) -> dnnl::primitive_desc {
    // norm_lp_sum with p = 2: (sum |x|^2)^(1/2).
    dnnl::reduction::desc desc(dnnl::algorithm::reduction_norm_lp_sum, d[0], d[1], 2.f, 0.f);
    return dnnl::reduction::primitive_desc(desc, eng);
  };
  return run_spec(sp, timing, ref.at("norm"));
}

std::vector<BaselineResult> layer_norm(const Task& task, const TimingOptions& timing, const TensorMap& in,
                                       const TensorMap& ref) {
  const int64_t M = param(task, "M"), N = param(task, "N");
  Spec sp;
  sp.layout = "row-major";
  sp.any_activations = false;  // layer normalization takes no format_tag::any source
  sp.weight_name = "gamma, beta";
  sp.ops = {{DNNL_ARG_SRC, plain({M, N}), Role::kActivation, in.at("X")},
            {DNNL_ARG_SCALE, plain({N}), Role::kWeight, in.at("gamma")},
            {DNNL_ARG_SHIFT, plain({N}), Role::kWeight, in.at("beta")},
            {DNNL_ARG_DST, plain({M, N}), Role::kOutput, {}}};
  sp.make = [](const dnnl::engine& eng, const std::vector<memory::desc>& d) -> dnnl::primitive_desc {
    // The same epsilon as the workload; mean and variance computed per row.
    dnnl::layer_normalization_forward::desc desc(
        dnnl::prop_kind::forward_inference, d[0], 1e-5f,
        dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift);
    return dnnl::layer_normalization_forward::primitive_desc(desc, eng);
  };
  return run_spec(sp, timing, ref.at("layer_norm"));
}

}  // namespace
}  // namespace onednn

std::vector<BaselineResult> run_onednn_baselines(const Task& task, const TimingOptions& timing,
                                                 const TensorMap& inputs, const TensorMap& reference) {
  omp_set_num_threads(task.target.threads);
  try {
    bool handled = false;
    auto r = onednn::matmul_family(task, timing, inputs, reference, &handled);
    if (handled) return r;
    r = onednn::conv_family(task, timing, inputs, reference, &handled);
    if (handled) return r;
    if (task.workload == "softmax") return onednn::softmax(task, timing, inputs, reference);
    if (task.workload == "norm") return onednn::norm(task, timing, inputs, reference);
    if (task.workload == "layer_norm") return onednn::layer_norm(task, timing, inputs, reference);
  } catch (const dnnl::error& e) {
    return {unsupported_baseline("onednn", "", std::string("oneDNN error: ") + e.what())};
  } catch (const std::logic_error& e) {
    return {unsupported_baseline("onednn", "", std::string("internal error: ") + e.what())};
  }
  return {unsupported_baseline("onednn", "", "no oneDNN primitive expresses workload " + task.workload)};
}

}  // namespace loom
