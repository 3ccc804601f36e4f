// Parallel loops of the C backend: `#pragma omp parallel for` (kOpenMP) or,
// as the LLVM backend does, the loop body outlined into a function that
// loom_parallel_for runs over sub-ranges of the loop (kRuntime).
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/c/emitter.h"
#include "codegen/passes/lane_analysis.h"
#include "ir/error.h"

namespace loom {
namespace c_backend {

void CEmitter::openmp_loop(const Stmt& s) {
  std::string pragma = "#pragma omp parallel for";
  if (opts_.num_threads > 0) pragma += " num_threads(" + std::to_string(opts_.num_threads) + ")";
  in_parallel_ = true;
  // Not serial_loop: a register tile's variables would be shared by the threads.
  if (opts_.unroll_at_emission && s->extent == 1) serial_loop(s, "");
  else plain_loop(s, pragma);
  in_parallel_ = false;
}

// The closure holds what the body reads from the enclosing scope: buffer
// pointers and the values of the enclosing loops' variables (variables of
// loops unrolled at emission are already constants in the body).
void CEmitter::outlined_loop(const Stmt& s) {
  const Stmt body = s->body.empty() ? nullptr : s->body[0];
  std::set<int64_t> used_vars;
  std::set<std::string> used_buffers;
  collect_uses(body, &used_vars, &used_buffers);
  std::vector<std::string> fields;  // C declarations, "float* A" / "int64_t i"
  std::vector<std::string> values;  // what the caller stores into them
  std::vector<std::string> unpack;  // the body's local copies
  for (const auto& name : used_buffers) {
    if (!live_buffers_.count(name)) continue;  // allocated inside the body
    const std::string& c = buffer_names_.at(name);
    fields.push_back("float* " + c);
    values.push_back(c);
    unpack.push_back("float* restrict " + c + " = loom_cl->" + c + ";");
  }
  for (int64_t id : used_vars) {
    if (!bound_.count(id)) continue;  // bound inside the body, or a constant
    const std::string& c = var_names_.at(id);
    fields.push_back("int64_t " + c);
    values.push_back(c);
    unpack.push_back("const int64_t " + c + " = loom_cl->" + c + ";");
  }
  if (fields.empty()) {  // C has no empty structs
    fields.push_back("int64_t unused");
    values.push_back("0");
  }
  const std::string fn = unique(fn_name_ + "_par" + std::to_string(outlined_.size()), 0);
  const std::string closure_type = unique(fn + "_closure", 0);

  std::ostringstream text;
  text << "typedef struct {\n";
  for (const auto& f : fields) text << "  " << f << ";\n";
  text << "} " << closure_type << ";\n\n";
  text << "static void " << fn << "(int64_t loom_begin, int64_t loom_end, void* loom_closure) {\n";
  text << "  const " << closure_type << "* loom_cl = (const " << closure_type << "*)loom_closure;\n";
  for (const auto& u : unpack) text << "  " << u << "\n";
  const Var& v = s->loop_var;
  const std::string& name = var_name(v);
  text << "  for (int64_t " << name << " = loom_begin; " << name << " < loom_end; ++" << name << ") {\n";

  std::ostringstream* saved_out = out_;
  const int saved_indent = indent_;
  out_ = &text;
  indent_ = 2;
  in_parallel_ = true;
  bound_.insert(v->var_id);
  stmt(body);
  bound_.erase(v->var_id);
  in_parallel_ = false;
  out_ = saved_out;
  indent_ = saved_indent;
  text << "  }\n}\n";
  outlined_.push_back(text.str());

  const std::string closure = fresh("closure");
  std::string init;
  for (size_t i = 0; i < values.size(); ++i) init += (i ? ", " : "") + values[i];
  line("{");
  line("  " + closure_type + " " + closure + " = {" + init + "};");
  line("  loom_parallel_for(" + int_literal(s->extent) + ", " + fn + ", &" + closure + ", " +
       std::to_string(opts_.num_threads) + ");");
  line("}");
}

}  // namespace c_backend
}  // namespace loom
