// Internal to the C backend: the emitter that emit_c_source runs, shared by
// source.cc (names, statements, scalar code, unrolling, allocation),
// parallel.cc (OpenMP and outlined parallel loops), vectorize.cc
// (vectorized loops as explicit vector code) and register_tile.cc
// (accumulators of a loop kept in variables). vector_helpers.cc holds the
// C text of the vector types and helper functions a vector unit uses.
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <sstream>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "codegen/c/source.h"
#include "ir/expr.h"
#include "ir/stmt.h"

namespace loom {
namespace c_backend {

std::string int_literal(int64_t v);
// Shortest decimal that reads back as the same float (so exact), else hex.
std::string float_literal(double d);
// Identifiers the emitted code relies on (keywords, libc, helpers).
const std::set<std::string>& reserved_identifiers();
// Scalar C call of a math function: libm's (expf, powf, ...), or with
// `inline_math` the inline ports of the vector math (loom_f32_exp, ...).
std::string math_call(const std::string& fn, const std::vector<std::string>& args, bool inline_math = false);
// Whether `fn` is one of the functions with an inline form (exp, log, tanh,
// erf, sigmoid).
bool has_inline_math(const std::string& fn);

// Scalar C for an expression (what to_c_expr prints). `load`, when set,
// prints each load from the node, its buffer's C name and its index's text
// instead of `buffer[index]` (the emitter records, promotes and guards loads
// with it).
class ExprPrinter {
 public:
  using LoadHook =
      std::function<std::string(const ExprNode& load, const std::string& buffer, const std::string& index)>;
  explicit ExprPrinter(const CNames& names, LoadHook load = nullptr, bool inline_math = false)
      : names_(names), load_(std::move(load)), inline_math_(inline_math) {}
  std::string print(const Expr& e);

 private:
  std::string buffer(const std::string& name);
  std::string print_div_mod(const ExprNode& n);

  const CNames& names_;
  LoadHook load_;
  bool inline_math_;
};

// ---- vector support code (vector_helpers.cc)

// Headers and macros a unit with vector code needs once.
const char* c_vector_prelude();
// The definition of LOOM_VECTORIZE_LOOP, which the vector form puts before
// its innermost plain loops: for clang, vectorize at `width` lanes.
std::string c_loop_hint(int width);
// Typedefs and helper functions for vectors of `width` lanes (2, 4, 8 or
// 16); with `math`, also the vector exp, log, tanh, sigmoid and erf.
std::string c_vector_helpers(int width, bool math);
// Scalar float versions of the vector math (loom_f32_exp, ...): what the
// vector form's scalar code calls, so that loops the C compiler vectorizes
// itself have no calls, and one-lane code computes what vector lanes do.
std::string c_scalar_math_helpers();
// The C type of a vector value: loom_f32xW (float), loom_i64xW (int),
// loom_i32xW (bool: lanes -1 for true, 0 for false).
std::string c_vector_type(DType t, int width);

// A value in vector code: C text of a scalar (the same for all lanes of the
// chunk: float, int64_t, or int 0/1 for bool) or of a vector
// (c_vector_type of its dtype; int lanes are int32 when `narrow`).
struct CVal {
  std::string c;
  bool vec = false;
  bool narrow = false;  // int lanes whose every intermediate value fits in int32
};

// The chunk of a vectorized loop being emitted.
struct CChunk {
  Var var;                 // the vectorized loop's variable (see `source`)
  int width = 1;           // lanes of this chunk (a power of two)
  int valid = 1;           // lanes that exist: `width`, fewer in a masked tail
  int64_t extent = 1;      // extent of the vectorized loop
  int vector_width = 1;    // chunk stride: full chunks start at its multiples
  std::string base;        // int64_t C expression of lane 0's value
  bool base_is_const = false;
  int64_t base_value = 0;  // when base_is_const
  std::string mask;        // C name of the active-lane mask; empty = all lanes
  std::string tail_mask;   // in a masked tail: the mask of its `valid` lanes
  // In a masked tail, the loop's variable, replaced in the body by `var`,
  // a variable whose extent covers the inactive lanes too (so that the
  // bounds that decide int32 lanes and plain division hold in every lane).
  Var source;
};

// The lanes of the vector holding `valid` elements (the next power of two).
int vector_lanes(int valid);
// A constant mask of `lanes` lanes whose first `valid` are active.
std::string lane_prefix_mask(int lanes, int valid);

// A buffer access made while a loop body is recorded (register_tile.cc).
struct CAccess {
  std::string buffer;  // IR name
  Expr index;          // of the first element
  std::string text;    // the index's C text
  int width = 1;       // elements: 1, or the lanes of a vector access
  bool store = false;
  bool plain = true;   // false: masked, gathered or scattered
};
struct CRecording {
  std::vector<CAccess> accesses;
  bool loop = false;  // the body emitted a loop of its own
};
// A load of elements inside a part (its first `width` from `shift` on).
struct CView {
  std::string text;  // the load's index text
  int width = 1;
  int64_t shift = 0;
};
// A part of a temp buffer kept in a C variable (across a loop, or for the
// whole allocation).
struct CSlot {
  std::string buffer;  // IR name
  std::string index;   // C text of the first element's index
  int width = 1;
  std::vector<std::string> texts;  // every index text the body reaches it by
  std::string var;
  std::vector<CView> views;  // loads of other ranges inside it
};

// A loop whose body has at most this many steps (codegen/passes/unrolling.h)
// has its inner loops unrolled when that makes its accumulators variables.
constexpr int64_t kMaxTileSteps = 256;
// At most this many variables per register tile.
constexpr size_t kMaxTileSlots = 64;

class CEmitter {
 public:
  CEmitter(const LoweredFunc& f, const CSourceOptions& opts);
  std::string run();

 private:
  // ---- names and output (source.cc)
  std::string unique(const std::string& base, int64_t id);
  // A fresh identifier for generated code (loom_ prefix: never a user's).
  std::string fresh(const std::string& what);
  void declare_buffer_name(const std::string& name);
  const std::string& var_name(const Var& v);
  std::string pad() const { return std::string(2 * indent_, ' '); }
  void line(const std::string& s) { *out_ << pad() << s << "\n"; }
  static std::string describe(const Buffer& b);

  // ---- scalar statements (source.cc)
  // `e` with the variables of loops unrolled at emission replaced by their
  // values (load indices simplified, so a register tile's become literals).
  Expr bound(const Expr& e) const;
  std::string expr(const Expr& e);
  // The scalar printer of this unit (load hook; inline math in the vector form).
  ExprPrinter printer(const CNames& names) { return ExprPrinter(names, load_hook(), opts_.vector_width > 0); }
  void stmt(const Stmt& s);
  void block(const Stmt& s);
  void allocate(const Stmt& s);
  void loop(const Stmt& s);
  void serial_loop(const Stmt& s, const std::string& pragma);
  void plain_loop(const Stmt& s, const std::string& pragma);
  static bool innermost(const Stmt& loop);
  void unrolled_loop(const Stmt& s);
  void store(const Stmt& s);
  void if_stmt(const Stmt& s);

  // ---- parallel loops (parallel.cc)
  void openmp_loop(const Stmt& s);
  void outlined_loop(const Stmt& s);

  // ---- register tiles (register_tile.cc)
  // Records (when recording) an access; returns the variable holding the
  // accessed part when it is promoted, else "".
  std::string access(const std::string& buffer, const Expr& index, const std::string& text, int width,
                     bool store, bool plain);
  // `buffer[index]` of a scalar load, or its promoted variable (under a
  // mask: only when some lane is active).
  std::string load_element(const std::string& buffer, const Expr& index, const std::string& text);
  ExprPrinter::LoadHook load_hook();
  // The parts of temps that `loop`'s body (unrolled when `force`) accesses
  // only whole, unconditionally, at indices invariant in the loop.
  std::vector<CSlot> plan_slots(const Stmt& loop, bool force);
  void promoted_loop(const Stmt& s, const std::string& pragma, std::vector<CSlot> slots, bool force);
  // The parts of the temp `buf` that the allocation `s` holds when its body
  // (loops unrolled) accesses it only whole, at constant indices: the temp
  // is then a set of variables ("" when it is not).
  std::vector<CSlot> plan_variables(const Stmt& s, const Buffer& buf);
  void temp_as_variables(const Stmt& s, const Buffer& buf, std::vector<CSlot> slots);
  // Groups `accesses` of `buffer` into whole, non-overlapping parts by their
  // offset from the first one; empty when they are not.
  static std::vector<CSlot> parts_of(const std::string& buffer, const std::vector<const CAccess*>& accesses);
  // Emits `body` with its accesses recorded (text discarded).
  CRecording record(const Stmt& body, bool force);

  // ---- vector code (vectorize.cc)
  // A transposing copy (codegen/passes/transpose_nest.h) in register tiles
  // (transpose.cc); false, emitting nothing, for any other loop.
  bool transposing_copy(const Stmt& s);
  void vectorized_loop(const Stmt& s);
  // The body for lanes [base, base + valid): one chunk of `valid` lanes, or
  // for a count that is not a power of two a chunk of the next power of two
  // whose extra lanes are masked off; a one-lane chunk is scalar code.
  void vector_chunk(const Stmt& s, const std::string& base, bool base_is_const, int64_t base_value, int valid);
  CVal vexpr(const Expr& e);
  // Uniform value of e with the lane variable = base; *at: that expression
  // (e itself when base is not a constant).
  std::string vscalar(const Expr& e, Expr* at = nullptr);
  CVal vbinary(const Expr& e);
  CVal vdiv_mod(const Expr& e, CVal a, CVal b, bool narrow);
  CVal vselect(const ExprNode& n);
  bool arms_narrow(const ExprNode& select, const CVal& t, const CVal& f);
  CVal vcall(const ExprNode& n);
  CVal vload(const ExprNode& n);
  CVal vconvert(CVal v, DType from, DType to);
  std::string widen(const CVal& v, DType t);
  // An int value as int32 lanes (`narrow`, when it fits) or int64 lanes.
  std::string wint(const CVal& v, bool narrow);
  std::string ivfn(const std::string& op, bool narrow) const;
  std::string vtype(DType t) const { return c_vector_type(t, chunk_->width); }
  std::string vfn(const std::string& op, DType t = DType::kFloat) const;
  std::string pow_constant(const std::string& x, double y);
  void vstore(const Stmt& s);
  void vif(const Stmt& s, const std::string& cond);
  CNames lane_base_names();

  const LoweredFunc& f_;
  const CSourceOptions& opts_;
  std::string fn_name_;
  std::set<std::string> used_;
  std::unordered_map<std::string, std::string> buffer_names_;
  std::set<std::string> live_buffers_;
  std::unordered_map<int64_t, std::string> var_names_;
  std::set<int64_t> bound_;
  CNames names_;

  std::ostringstream body_;
  std::ostringstream* out_ = &body_;
  std::vector<std::string> outlined_;  // functions emitted before the entry points
  int indent_ = 0;
  int num_fresh_ = 0;
  bool in_parallel_ = false;
  int64_t unroll_budget_ = 0;  // active auto_unroll_max_step (0 = none)
  // Variables of loops unrolled at emission and their current values.
  std::vector<std::pair<Var, Expr>> consts_;

  CRecording* rec_ = nullptr;     // the loop body being recorded, if any
  std::unordered_map<std::string, std::string> slots_;  // promoted part -> its variable
  bool force_unroll_ = false;     // unroll every loop (a register tile's body)
  bool loop_hints_ = false;       // a plain loop got LOOM_VECTORIZE_LOOP

  CChunk* chunk_ = nullptr;       // the vector chunk being emitted, if any
  std::set<int> vector_widths_;   // lane counts the unit's vector code uses
  std::set<int> math_widths_;     // ... and those that call vector math
};

}  // namespace c_backend
}  // namespace loom
