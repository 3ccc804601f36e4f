#include "ir/stmt.h"

#include <sstream>

#include "ir/error.h"
#include "ir/simplify.h"

namespace loom {

const char* for_kind_name(ForKind k) {
  switch (k) {
    case ForKind::kSerial: return "serial";
    case ForKind::kParallel: return "parallel";
    case ForKind::kVectorized: return "vectorize";
    case ForKind::kUnrolled: return "unroll";
    case ForKind::kVThread: return "vthread";
    case ForKind::kBlockX: return "blockIdx.x";
    case ForKind::kBlockY: return "blockIdx.y";
    case ForKind::kBlockZ: return "blockIdx.z";
    case ForKind::kThreadX: return "threadIdx.x";
    case ForKind::kThreadY: return "threadIdx.y";
    case ForKind::kThreadZ: return "threadIdx.z";
  }
  return "?";
}

const char* buffer_scope_name(BufferScope s) {
  switch (s) {
    case BufferScope::kGlobal: return "global";
    case BufferScope::kLocal: return "local";
    case BufferScope::kShared: return "shared";
  }
  return "?";
}

int64_t Buffer::size() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

Stmt make_for(Var v, int64_t extent, ForKind kind, Stmt body, int64_t auto_unroll) {
  auto n = std::make_shared<StmtNode>();
  n->kind = StmtKind::kFor;
  n->loop_var = std::move(v);
  n->extent = extent;
  n->for_kind = kind;
  n->auto_unroll_max_step = auto_unroll;
  n->body = {std::move(body)};
  return n;
}

Stmt make_store(const std::string& buffer, Expr index, Expr value) {
  auto n = std::make_shared<StmtNode>();
  n->kind = StmtKind::kStore;
  n->buffer = buffer;
  n->index = std::move(index);
  n->value = std::move(value);
  return n;
}

Stmt make_if(Expr cond, Stmt then_case, Stmt else_case) {
  auto n = std::make_shared<StmtNode>();
  n->kind = StmtKind::kIf;
  n->cond = std::move(cond);
  n->body = {std::move(then_case)};
  if (else_case) n->body.push_back(std::move(else_case));
  return n;
}

Stmt make_seq(std::vector<Stmt> stmts) {
  std::vector<Stmt> flat;
  for (auto& s : stmts) {
    if (!s) continue;
    if (s->kind == StmtKind::kSeq) {
      for (const auto& c : s->body) flat.push_back(c);
    } else {
      flat.push_back(std::move(s));
    }
  }
  if (flat.size() == 1) return flat[0];
  auto n = std::make_shared<StmtNode>();
  n->kind = StmtKind::kSeq;
  n->body = std::move(flat);
  return n;
}

Stmt make_allocate(const std::string& buffer, Stmt body) {
  auto n = std::make_shared<StmtNode>();
  n->kind = StmtKind::kAllocate;
  n->buffer = buffer;
  n->body = {std::move(body)};
  return n;
}

const Buffer* LoweredFunc::find_buffer(const std::string& name) const {
  for (const auto& b : args) if (b.name == name) return &b;
  for (const auto& b : temps) if (b.name == name) return &b;
  return nullptr;
}

namespace {
void print(std::ostream& os, const Stmt& s, int indent) {
  std::string pad(indent * 2, ' ');
  if (!s) return;
  switch (s->kind) {
    case StmtKind::kFor:
      os << pad;
      if (s->for_kind != ForKind::kSerial) os << for_kind_name(s->for_kind) << " ";
      os << "for " << s->loop_var->name << " in 0.." << s->extent;
      if (s->auto_unroll_max_step > 0) os << "  # auto_unroll_max_step=" << s->auto_unroll_max_step;
      os << "\n";
      print(os, s->body[0], indent + 1);
      return;
    case StmtKind::kStore:
      os << pad << s->buffer << "[" << to_string(s->index) << "] = " << to_string(s->value) << "\n";
      return;
    case StmtKind::kIf:
      os << pad << "if " << to_string(s->cond) << "\n";
      print(os, s->body[0], indent + 1);
      if (s->body.size() > 1) {
        os << pad << "else\n";
        print(os, s->body[1], indent + 1);
      }
      return;
    case StmtKind::kSeq:
      for (const auto& c : s->body) print(os, c, indent);
      return;
    case StmtKind::kAllocate:
      os << pad << "allocate " << s->buffer << "\n";
      print(os, s->body[0], indent);
      return;
  }
}
}  // namespace

std::string to_string(const Stmt& s, int indent) {
  std::ostringstream os;
  print(os, s, indent);
  return os.str();
}

void add_pretransformed_arguments(const LoweredFunc& f, std::map<std::string, std::vector<float>>& tensors) {
  for (const Buffer& b : f.args) {
    if (!b.layout) continue;
    auto it = tensors.find(b.layout->source);
    if (it == tensors.end()) throw LoomError("no data for " + b.layout->source + ", the source of " + b.name);
    tensors[b.name] = b.layout->apply(it->second.data());
  }
}

std::string to_string(const LoweredFunc& f) {
  std::ostringstream os;
  auto buf = [&](const Buffer& b) {
    os << b.name << "[";
    for (size_t i = 0; i < b.shape.size(); ++i) os << (i ? ", " : "") << b.shape[i];
    os << "]";
    if (b.scope != BufferScope::kGlobal) os << " (" << buffer_scope_name(b.scope) << ")";
    if (b.layout) os << " = " << b.layout->to_string();
  };
  os << "func " << f.name << "(";
  for (size_t i = 0; i < f.args.size(); ++i) {
    if (i) os << ", ";
    buf(f.args[i]);
  }
  os << ")\n";
  for (const auto& t : f.temps) {
    os << "  temp ";
    buf(t);
    os << "\n";
  }
  print(os, f.body, 1);
  return os.str();
}

void visit_stmt(const Stmt& s, const std::function<void(const Stmt&)>& fn) {
  if (!s) return;
  fn(s);
  for (const auto& c : s->body) visit_stmt(c, fn);
}

Stmt map_exprs(const Stmt& s, const std::function<Expr(const Expr&)>& fn) {
  if (!s) return s;
  auto n = std::make_shared<StmtNode>(*s);
  if (n->index.defined()) n->index = fn(n->index);
  if (n->value.defined()) n->value = fn(n->value);
  if (n->cond.defined()) n->cond = fn(n->cond);
  for (auto& c : n->body) c = map_exprs(c, fn);
  return n;
}

Stmt map_children(const Stmt& s, const std::function<Stmt(const Stmt&)>& fn) {
  if (!s) return s;
  std::vector<Stmt> body;
  body.reserve(s->body.size());
  bool changed = false;
  for (const auto& c : s->body) {
    body.push_back(fn(c));
    changed = changed || body.back() != c;
  }
  if (!changed) return s;
  auto n = std::make_shared<StmtNode>(*s);
  n->body = std::move(body);
  return n;
}

Stmt substitute(const Stmt& s, const std::vector<std::pair<Var, Expr>>& map) {
  Stmt r = map_exprs(s, [&](const Expr& e) { return simplify(substitute(e, map)); });
  // Ifs the substitution decided are replaced by the branch taken.
  std::function<Stmt(const Stmt&)> prune = [&](const Stmt& x) -> Stmt {
    if (!x) return x;
    auto n = std::make_shared<StmtNode>(*x);
    for (auto& c : n->body) c = prune(c);
    if (n->kind == StmtKind::kIf && is_const_int(n->cond)) {
      if (n->cond->int_value) return n->body[0];
      return n->body.size() > 1 ? n->body[1] : make_seq({});
    }
    return n;
  };
  return prune(r);
}

}  // namespace loom
