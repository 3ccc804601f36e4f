// Padding-only taps dropped: a conv2d whose kernel has rows or columns that
// read only zero padding, for every output position, gets a weight without
// them and its padding shrunk to match. Dilated convolutions with rates
// larger than the feature map are the case (DeepLabV3's ASPP: 3x3 convs with
// dilation 24 and 36 on a 14x14 map read the input through the centre tap
// only, so they are 1x1 convs with nine times the work). The output is the
// same: a dropped tap only ever multiplies zeros.
//
// Per spatial dimension, tap k reads input index y*stride - pad_begin +
// k*dilation for the outputs y; the taps kept are the first to the last
// that read inside the input for some y. The new begin padding is
// pad_begin - first*dilation; the new end padding the least that keeps the
// output size. A dimension where that would need negative padding, or a
// conv whose every tap reads only padding, is left as it is.
#include <algorithm>
#include <optional>

#include "graph/passes/pass.h"

namespace loom::graph {

namespace {

struct KeptTaps {
  int64_t first = 0, count = 0;     // kept kernel indices [first, first + count)
  int64_t pad_begin = 0, pad_end = 0;
};

// The taps of one spatial dimension worth keeping; nullopt when all are
// (nothing to drop) or the dimension cannot be narrowed.
std::optional<KeptTaps> kept_taps(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t pad_begin,
                                  int64_t dilation) {
  auto reads_input = [&](int64_t k) {
    for (int64_t y = 0; y < out; ++y) {
      const int64_t i = y * stride - pad_begin + k * dilation;
      if (i >= 0 && i < in) return true;
    }
    return false;
  };
  int64_t first = 0, last = kernel - 1;
  while (first < kernel && !reads_input(first)) ++first;
  if (first == kernel) return std::nullopt;  // only padding: left alone
  while (!reads_input(last)) --last;
  if (first == 0 && last == kernel - 1) return std::nullopt;
  KeptTaps t;
  t.first = first;
  t.count = last - first + 1;
  t.pad_begin = pad_begin - first * dilation;
  if (t.pad_begin < 0) return std::nullopt;
  const int64_t span = (t.count - 1) * dilation + 1;
  t.pad_end = std::max<int64_t>(0, (out - 1) * stride + span - in - t.pad_begin);
  if ((in + t.pad_begin + t.pad_end - span) / stride + 1 != out) return std::nullopt;
  return t;
}

class DropPaddingTapsPass : public GraphPass {
 public:
  std::string name() const override { return "drop_padding_taps"; }
  Graph run(const Graph& g) const override {
    Graph out = g;
    bool changed = false;
    for (Node& n : out.nodes) {
      if (n.op != "conv2d" || !g.is_constant(n.inputs[1])) continue;
      const Shape x = g.shape(n.inputs[0]);
      const Shape& w = g.constants.at(n.inputs[1]).shape;
      const Shape y = g.shape(n.output);
      const auto strides = n.attrs["strides"].get<std::vector<int64_t>>();
      const auto dilations = n.attrs["dilations"].get<std::vector<int64_t>>();
      auto pads = n.attrs["pads"].get<std::vector<int64_t>>();  // top, left, bottom, right
      std::optional<KeptTaps> taps[2];
      for (int d = 0; d < 2; ++d)
        taps[d] = kept_taps(x[2 + d], y[2 + d], w[2 + d], strides[d], pads[d], dilations[d]);
      if (!taps[0] && !taps[1]) continue;
      const KeptTaps rows = taps[0].value_or(KeptTaps{0, w[2], pads[0], pads[2]});
      const KeptTaps cols = taps[1].value_or(KeptTaps{0, w[3], pads[1], pads[3]});
      const Constant& W = g.constants.at(n.inputs[1]);
      Constant narrow{{w[0], w[1], rows.count, cols.count}, {}};
      narrow.data.reserve(static_cast<size_t>(w[0] * w[1] * rows.count * cols.count));
      for (int64_t kc = 0; kc < w[0] * w[1]; ++kc)
        for (int64_t r = rows.first; r < rows.first + rows.count; ++r)
          for (int64_t s = cols.first; s < cols.first + cols.count; ++s)
            narrow.data.push_back(W.data[static_cast<size_t>((kc * w[2] + r) * w[3] + s)]);
      const std::string name = new_constant_name(g, out, n.inputs[1] + "_taps");
      out.constants[name] = std::move(narrow);
      n.inputs[1] = name;
      n.attrs["pads"] = std::vector<int64_t>{rows.pad_begin, cols.pad_begin, rows.pad_end, cols.pad_end};
      // One tap left: no dilation, so that the task is the plain conv it is.
      n.attrs["dilations"] = std::vector<int64_t>{rows.count == 1 ? 1 : dilations[0], cols.count == 1 ? 1 : dilations[1]};
      changed = true;
    }
    if (changed) out.validate();
    return out;
  }
};

}  // namespace

GraphPassPtr make_drop_padding_taps_pass() { return std::make_unique<DropPaddingTapsPass>(); }

}  // namespace loom::graph
