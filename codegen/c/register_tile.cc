// Register tiles: the accumulators a loop updates kept in C variables.
//
// After unrolling, the innermost loop of a tuned kernel (the reduction of a
// cache-write stage) reads and writes a few whole vectors of a temp buffer
// at indices that do not change across its iterations. LLVM keeps them in
// registers for the JIT (LICM's scalar promotion); GCC at -O3 need not (it
// may interchange and jam the loops and update the tile in memory). So the
// emitter does it: it emits the loop's body once to record its accesses,
// and when every access to a temp buffer is a whole part of it (a vector or
// one element, never straddling another part), made on every iteration (not
// under a guard, a select arm or a mask) at an index invariant in the loop,
// those parts are loaded into variables before the loop, used by the body,
// and stored back after it.
#include <algorithm>
#include <climits>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/c/emitter.h"
#include "codegen/passes/lane_analysis.h"
#include "codegen/passes/unrolling.h"
#include "ir/simplify.h"

namespace loom {
namespace c_backend {

namespace {

std::string slot_key(const std::string& buffer, const std::string& text, int width) {
  return buffer + '\x01' + text + '\x01' + std::to_string(width);
}

// Buffers a statement accesses, and those it accesses only sometimes
// (under an if, or in an arm of a select).
void collect_accesses(const Expr& e, bool conditional, std::set<std::string>* touched,
                      std::set<std::string>* sometimes) {
  if (!e.defined()) return;
  if (e->kind == ExprKind::kLoad) {
    touched->insert(e->name);
    if (conditional) sometimes->insert(e->name);
  }
  for (size_t i = 0; i < e->args.size(); ++i)
    collect_accesses(e->args[i], conditional || (e->kind == ExprKind::kSelect && i > 0), touched, sometimes);
}

void collect_accesses(const Stmt& s, bool conditional, std::set<std::string>* touched,
                      std::set<std::string>* sometimes) {
  if (!s) return;
  collect_accesses(s->index, conditional, touched, sometimes);
  collect_accesses(s->value, conditional, touched, sometimes);
  collect_accesses(s->cond, conditional, touched, sometimes);
  if (s->kind == StmtKind::kStore) {
    touched->insert(s->buffer);
    if (conditional) sometimes->insert(s->buffer);
  }
  for (const auto& c : s->body) collect_accesses(c, conditional || s->kind == StmtKind::kIf, touched, sometimes);
}

}  // namespace

std::string CEmitter::access(const std::string& buffer, const Expr& index, const std::string& text, int width,
                             bool store, bool plain) {
  if (rec_) rec_->accesses.push_back({buffer, index, text, width, store, plain});
  if (slots_.empty() || !plain) return "";
  auto it = slots_.find(slot_key(buffer, text, width));
  return it == slots_.end() ? "" : it->second;
}

std::string CEmitter::load_element(const std::string& buffer, const Expr& index, const std::string& text) {
  // (Lane 0 of a masked tail is always active.)
  const bool masked = chunk_ && chunk_->mask != chunk_->tail_mask;
  const std::string slot = access(buffer, index, text, 1, false, !masked);
  if (!slot.empty()) return slot;
  const std::string load = names_.buffer(buffer) + "[" + text + "]";
  // Under a mask, a uniform load runs only when some lane is active (the
  // element may not exist for a chunk whose lanes are all inactive).
  if (masked) return "(" + vfn("any", DType::kBool) + "(" + chunk_->mask + ") ? " + load + " : 0.0f)";
  return load;
}

ExprPrinter::LoadHook CEmitter::load_hook() {
  return [this](const ExprNode& n, const std::string&, const std::string& index) {
    return load_element(n.name, n.args[0], index);
  };
}

CRecording CEmitter::record(const Stmt& body, bool force) {
  CRecording rec;
  std::ostringstream scratch;
  std::ostringstream* saved_out = out_;
  const bool saved_force = force_unroll_;
  out_ = &scratch;
  rec_ = &rec;
  force_unroll_ = force;
  stmt(body);
  force_unroll_ = saved_force;
  rec_ = nullptr;
  out_ = saved_out;
  return rec;
}

std::vector<CSlot> CEmitter::parts_of(const std::string& buffer, const std::vector<const CAccess*>& accesses) {
  std::map<int64_t, CSlot> parts;
  for (const CAccess* a : accesses) {
    int64_t offset = 0;
    if (!is_const_int(simplify(a->index - accesses[0]->index), &offset)) return {};
    auto [it, fresh_part] = parts.emplace(offset, CSlot{buffer, a->text, a->width, {}, ""});
    if (!fresh_part && it->second.width != a->width) return {};
    it->second.texts.push_back(a->text);
  }
  std::vector<CSlot> out;
  int64_t end = INT64_MIN;
  for (auto& [offset, part] : parts) {
    if (offset < end) return {};  // overlaps the part before
    end = offset + part.width;
    out.push_back(std::move(part));
  }
  return out;
}

std::vector<CSlot> CEmitter::plan_slots(const Stmt& loop, bool force) {
  const Stmt body = loop->body.empty() ? nullptr : loop->body[0];
  std::set<std::string> touched, sometimes, candidates;
  collect_accesses(body, false, &touched, &sometimes);
  for (const auto& t : f_.temps)
    if (touched.count(t.name) && !sometimes.count(t.name) && live_buffers_.count(t.name)) candidates.insert(t.name);
  if (candidates.empty()) return {};

  const int64_t id = loop->loop_var->var_id;
  const bool was_bound = bound_.count(id) > 0;
  var_name(loop->loop_var);
  bound_.insert(id);
  const CRecording rec = record(body, force);
  if (!was_bound) bound_.erase(id);
  if (rec.loop) return {};

  auto invariant = [&](const Expr& index) {
    if (!index.defined() || contains_load(index) || uses_var_id(index, id)) return false;
    bool ok = true;
    visit(index, [&](const Expr& x) {
      if (x->kind == ExprKind::kVar && !bound_.count(x->var_id)) ok = false;  // bound inside the body
    });
    return ok;
  };
  std::vector<CSlot> slots;
  for (const auto& buffer : candidates) {
    std::vector<const CAccess*> acc;
    bool ok = true, stored = false;
    for (const auto& a : rec.accesses) {
      if (a.buffer != buffer) continue;
      acc.push_back(&a);
      ok = ok && a.plain && invariant(a.index);
      stored = stored || a.store;
    }
    if (!ok || !stored) continue;  // a tile only read is for the compiler to hoist
    std::vector<CSlot> parts = parts_of(buffer, acc);
    if (parts.empty() || slots.size() + parts.size() > kMaxTileSlots) continue;
    for (auto& part : parts) slots.push_back(std::move(part));
  }
  return slots;
}

// The stores define the parts (each stored range the same as or disjoint
// from every other); each load reads inside one part: the stored range
// itself, or (a shorter or shifted range) a permutation of its lanes.
std::vector<CSlot> CEmitter::plan_variables(const Stmt& s, const Buffer& buf) {
  const Stmt body = s->body.empty() ? nullptr : s->body[0];
  if (!body || nest_steps_vectorized(body) > kMaxTileSteps) return {};
  const bool was_live = live_buffers_.count(buf.name) > 0;
  live_buffers_.insert(buf.name);
  const CRecording rec = record(body, true);
  if (!was_live) live_buffers_.erase(buf.name);
  if (rec.loop) return {};
  std::map<int64_t, CSlot> parts;
  std::vector<std::pair<int64_t, const CAccess*>> loads;
  for (const auto& a : rec.accesses) {
    if (a.buffer != buf.name) continue;
    int64_t offset = 0;
    if (!a.plain || !is_const_int(a.index, &offset)) return {};
    if (!a.store) {
      loads.push_back({offset, &a});
      continue;
    }
    auto [it, fresh_part] = parts.emplace(offset, CSlot{buf.name, a.text, a.width, {}, "", {}});
    if (!fresh_part && it->second.width != a.width) return {};
    it->second.texts.push_back(a.text);
  }
  int64_t end = INT64_MIN;
  for (const auto& [offset, part] : parts) {
    if (offset < end) return {};
    end = offset + part.width;
  }
  for (const auto& [offset, a] : loads) {
    auto it = parts.upper_bound(offset);
    if (it == parts.begin()) return {};
    --it;
    CSlot& part = it->second;
    const int64_t shift = offset - it->first;
    if (shift + a->width > part.width) return {};  // not inside one part
    if (shift == 0 && a->width == part.width) part.texts.push_back(a->text);
    else part.views.push_back({a->text, a->width, shift});
  }
  if (parts.empty() || parts.size() > kMaxTileSlots) return {};
  std::vector<CSlot> slots;
  for (auto& [offset, part] : parts) slots.push_back(std::move(part));
  return slots;
}

void CEmitter::temp_as_variables(const Stmt& s, const Buffer& buf, std::vector<CSlot> slots) {
  line("{  // allocate " + describe(buf) + ", held in variables");
  ++indent_;
  for (auto& slot : slots) {
    slot.var = fresh("acc");
    // Zero, not indeterminate: what an element read before any store holds
    // need not be defined, but reading an uninitialized variable is.
    if (slot.width == 1) {
      line("float " + slot.var + " = 0.0f;");
    } else {
      const std::string F = c_vector_type(DType::kFloat, vector_lanes(slot.width));
      line(F + " " + slot.var + " = " + F + "_splat(0.0f);");
    }
    for (const auto& text : slot.texts) slots_[slot_key(slot.buffer, text, slot.width)] = slot.var;
    // A view: lanes shift.. of the part; lanes past the view's width are
    // inactive and repeat the part's last lane.
    const int part_lanes = slot.width == 1 ? 1 : vector_lanes(slot.width);
    for (const auto& v : slot.views) {
      std::string value;
      if (v.width == 1) {
        value = slot.var + "[" + std::to_string(v.shift) + "]";
      } else {
        const int lanes = vector_lanes(v.width);
        value = "(" + c_vector_type(DType::kFloat, lanes) + "){";
        for (int k = 0; k < lanes; ++k)
          value += (k ? ", " : "") + slot.var + "[" + std::to_string(std::min<int64_t>(v.shift + k, part_lanes - 1)) + "]";
        value += "}";
      }
      slots_[slot_key(slot.buffer, v.text, v.width)] = value;
    }
  }
  const bool was_live = live_buffers_.count(buf.name) > 0;
  const bool saved_force = force_unroll_;
  live_buffers_.insert(buf.name);
  force_unroll_ = true;
  stmt(s->body.empty() ? nullptr : s->body[0]);
  force_unroll_ = saved_force;
  if (!was_live) live_buffers_.erase(buf.name);
  for (const auto& slot : slots) {
    for (const auto& text : slot.texts) slots_.erase(slot_key(slot.buffer, text, slot.width));
    for (const auto& v : slot.views) slots_.erase(slot_key(slot.buffer, v.text, v.width));
  }
  --indent_;
  line("}");
}

void CEmitter::promoted_loop(const Stmt& s, const std::string& pragma, std::vector<CSlot> slots, bool force) {
  line("{  // register tile");
  ++indent_;
  for (auto& slot : slots) {
    slot.var = fresh("acc");
    const std::string buf = names_.buffer(slot.buffer);
    const int lanes = vector_lanes(slot.width);
    const std::string F = c_vector_type(DType::kFloat, lanes), ptr = buf + " + " + slot.index;
    if (slot.width == 1) {
      line("float " + slot.var + " = " + buf + "[" + slot.index + "];");
    } else if (lanes == slot.width) {
      line(F + " " + slot.var + " = " + F + "_load(" + ptr + ");");
    } else {  // the part a masked tail holds
      line(F + " " + slot.var + " = " + F + "_mload(" + ptr + ", " + lane_prefix_mask(lanes, slot.width) + ");");
    }
    for (const auto& text : slot.texts) slots_[slot_key(slot.buffer, text, slot.width)] = slot.var;
  }
  const bool saved_force = force_unroll_;
  force_unroll_ = force;
  plain_loop(s, pragma);
  force_unroll_ = saved_force;
  for (const auto& slot : slots) {
    for (const auto& text : slot.texts) slots_.erase(slot_key(slot.buffer, text, slot.width));
    const std::string buf = names_.buffer(slot.buffer);
    const int lanes = vector_lanes(slot.width);
    const std::string F = c_vector_type(DType::kFloat, lanes), ptr = buf + " + " + slot.index;
    if (slot.width == 1) line(buf + "[" + slot.index + "] = " + slot.var + ";");
    else if (lanes == slot.width) line(F + "_store(" + ptr + ", " + slot.var + ");");
    else line(F + "_mstore(" + ptr + ", " + slot.var + ", " + lane_prefix_mask(lanes, slot.width) + ");");
  }
  --indent_;
  line("}");
}

}  // namespace c_backend
}  // namespace loom
