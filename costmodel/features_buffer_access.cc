// Buffer-access features of one statement: the linear form of each flat index
// in the enclosing loop variables, and from it bytes, footprints, cache lines,
// reuse and stride. See features.h for the row layout.
#include <algorithm>
#include <cmath>

#include "costmodel/features.h"

namespace loom::feature_detail {

namespace {

constexpr double kElemBytes = 4.0;  // float32 (the only dtype Loom tunes)
constexpr double kLineBytes = 64.0;

// Adds `scale` * (linear form of e) into `f`; non-linear parts only mark the
// variables they use.
void accumulate(const Expr& e, double scale, const std::vector<LoopInfo>& loops, IndexForm& f) {
  const ExprNode& n = *e;
  switch (n.kind) {
    case ExprKind::kIntImm:
    case ExprKind::kFloatImm:
      return;
    case ExprKind::kVar:
      for (size_t d = 0; d < loops.size(); ++d)
        if (loops[d].var_id == n.var_id) {
          f.coef[d] += scale;
          f.used[d] = true;
          return;
        }
      return;
    case ExprKind::kAdd:
      accumulate(n.args[0], scale, loops, f);
      accumulate(n.args[1], scale, loops, f);
      return;
    case ExprKind::kSub:
      accumulate(n.args[0], scale, loops, f);
      accumulate(n.args[1], -scale, loops, f);
      return;
    case ExprKind::kMul: {
      int64_t c = 0;
      if (is_const_int(n.args[1], &c)) return accumulate(n.args[0], scale * static_cast<double>(c), loops, f);
      if (is_const_int(n.args[0], &c)) return accumulate(n.args[1], scale * static_cast<double>(c), loops, f);
      break;
    }
    case ExprKind::kDiv: {
      int64_t c = 0;
      if (is_const_int(n.args[1], &c) && c != 0)
        return accumulate(n.args[0], scale / static_cast<double>(c), loops, f);
      break;
    }
    case ExprKind::kMod: {
      int64_t c = 0;
      if (is_const_int(n.args[1], &c)) return accumulate(n.args[0], scale, loops, f);
      break;
    }
    default:
      break;
  }
  // Non-linear: mark the variables used, contribute no coefficient.
  IndexForm tmp{std::vector<double>(loops.size(), 0.0), std::vector<bool>(loops.size(), false)};
  for (const Expr& a : n.args) accumulate(a, 1.0, loops, tmp);
  for (size_t d = 0; d < loops.size(); ++d) f.used[d] = f.used[d] || tmp.used[d];
}

}  // namespace

// The span of the index is 1 + sum |coef| * (extent - 1).
double access_footprint(const BufferAccess& a, const std::vector<LoopInfo>& loops, size_t level) {
  double span = 1, iters = 1;
  for (size_t d = level; d < loops.size(); ++d) {
    if (!a.form.used[d]) continue;
    double e = static_cast<double>(loops[d].extent);
    double c = std::fabs(a.form.coef[d]);
    span += (c > 0 ? c : 1.0) * (e - 1);
    iters *= e;
  }
  return std::min({span, iters, static_cast<double>(a.buffer_elems)});
}

namespace {

struct Computed {
  double bytes = 0, unique_bytes = 0;
};

}  // namespace

IndexForm index_form(const Expr& index, const std::vector<LoopInfo>& loops) {
  IndexForm f{std::vector<double>(loops.size(), 0.0), std::vector<bool>(loops.size(), false)};
  accumulate(index, 1.0, loops, f);
  for (size_t d = 0; d < loops.size(); ++d)
    if (std::fabs(f.coef[d]) < 1e-12 && !f.used[d]) f.coef[d] = 0;
  return f;
}

const std::vector<std::string>& buffer_feature_names() {
  static const std::vector<std::string> names = {
      "acc_read", "acc_write", "acc_readwrite", "bytes", "unique_bytes", "lines", "unique_lines",
      "reuse_loop_multiple_read", "reuse_serial_multiple_read", "reuse_none", "reuse_dis_iter",
      "reuse_dis_bytes", "reuse_ct", "bytes_d_reuse_ct", "unique_bytes_d_reuse_ct",
      "lines_d_reuse_ct", "unique_lines_d_reuse_ct", "stride"};
  return names;
}

std::vector<double> buffer_access_features(const std::vector<BufferAccess>& accesses,
                                           const std::vector<LoopInfo>& loops, float* out) {
  const size_t n = loops.size();
  double trip = 1;
  for (const auto& l : loops) trip *= static_cast<double>(l.extent);

  // Unique bytes of all accesses over loops [level, n): reuse distance in
  // bytes and the arithmetic-intensity curve use it.
  std::vector<double> unique_by_level(n + 1, 0.0);
  std::vector<std::vector<double>> fp(accesses.size(), std::vector<double>(n + 1, 0.0));
  for (size_t a = 0; a < accesses.size(); ++a)
    for (size_t l = 0; l <= n; ++l) {
      fp[a][l] = access_footprint(accesses[a], loops, l);
      unique_by_level[l] += fp[a][l] * kElemBytes;
    }

  std::vector<size_t> order(accesses.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  // Buffers are ranked by bytes accessed, then unique bytes, then name.
  std::sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    double bx = accesses[x].count, by = accesses[y].count;
    if (bx != by) return bx > by;
    if (fp[x][0] != fp[y][0]) return fp[x][0] > fp[y][0];
    return accesses[x].buffer < accesses[y].buffer;
  });

  std::fill(out, out + kMaxFeatureBuffers * kFeaturesPerBuffer, 0.0f);
  for (size_t k = 0; k < order.size() && k < static_cast<size_t>(kMaxFeatureBuffers); ++k) {
    const BufferAccess& a = accesses[order[k]];
    float* o = out + k * kFeaturesPerBuffer;
    // Access type (one-hot): read only, write only, read and write (e.g. an
    // accumulating reduction store).
    o[0] = a.read && !a.write;
    o[1] = a.write && !a.read;
    o[2] = a.read && a.write;
    // bytes: bytes moved by this buffer's accesses over the whole nest
    // (trip count x accesses per execution x 4).
    double bytes = trip * a.count * kElemBytes;
    o[3] = log_count(bytes);
    // unique_bytes: footprint of the access over the whole nest.
    double unique_bytes = fp[order[k]][0] * kElemBytes;
    o[4] = log_count(unique_bytes);
    // Stride loop: the innermost loop (extent > 1) that moves the index.
    int stride_loop = -1;
    for (size_t d = n; d-- > 0;)
      if (loops[d].extent > 1 && a.form.used[d]) {
        stride_loop = static_cast<int>(d);
        break;
      }
    double stride = stride_loop >= 0 ? std::fabs(a.form.coef[stride_loop]) : 0.0;
    if (stride_loop >= 0 && stride == 0) stride = 1;  // non-linear use: assume unit
    // lines: cache lines touched walking the nest in order; loops inside the
    // stride loop do not move the index (same line), consecutive stride-loop
    // iterations share a line when stride x 4 < 64, outer loops restart.
    double lines = 1;
    if (stride_loop >= 0) {
      for (int d = 0; d < stride_loop; ++d) lines *= static_cast<double>(loops[d].extent);
      double step = std::min(stride * kElemBytes, kLineBytes);
      lines *= std::ceil(static_cast<double>(loops[stride_loop].extent) * step / kLineBytes);
    }
    o[5] = log_count(lines);
    // unique_lines: distinct cache lines of the footprint (dense when the
    // innermost stride is below a line, else one line per element).
    double unique_lines = stride * kElemBytes < kLineBytes ? std::ceil(unique_bytes / kLineBytes)
                                                          : fp[order[k]][0];
    o[6] = log_count(std::max(1.0, unique_lines));
    // Reuse type (one-hot), distance and count. Loop-multiple-read: the
    // innermost loop (extent > 1) whose variable the index does not use re-reads
    // the same data each iteration; count = its extent, distance = iterations
    // of the loops inside it and the bytes all accesses touch in them.
    // Serial-multiple-read: no such loop, but the statement accesses the
    // buffer several times per execution; count = accesses. Else no reuse.
    int reuse_loop = -1;
    for (size_t d = n; d-- > 0;)
      if (loops[d].extent > 1 && !a.form.used[d]) {
        reuse_loop = static_cast<int>(d);
        break;
      }
    double reuse_ct = 0, dis_iter = 0, dis_bytes = 0;
    if (reuse_loop >= 0) {
      o[7] = 1;
      reuse_ct = static_cast<double>(loops[reuse_loop].extent);
      dis_iter = 1;
      for (size_t d = reuse_loop + 1; d < n; ++d) dis_iter *= static_cast<double>(loops[d].extent);
      dis_bytes = unique_by_level[reuse_loop + 1];
    } else if (a.count > 1) {
      o[8] = 1;
      reuse_ct = a.count;
      dis_iter = 1;
      for (const auto& b : accesses) dis_bytes += b.count * kElemBytes;
    } else {
      o[9] = 1;
    }
    o[10] = log_count(dis_iter);
    o[11] = log_count(dis_bytes);
    o[12] = log_count(reuse_ct);
    // Per-reuse quantities: bytes, unique bytes, lines, unique lines divided
    // by the reuse count (unchanged without reuse).
    double div = std::max(1.0, reuse_ct);
    o[13] = log_count(bytes / div);
    o[14] = log_count(unique_bytes / div);
    o[15] = log_count(lines / div);
    o[16] = log_count(unique_lines / div);
    // stride: elements between consecutive iterations of the stride loop.
    o[17] = log_count(stride);
  }
  return unique_by_level;
}

}  // namespace loom::feature_detail
