// ORC LLJIT setup, the O3 pipeline, and CompiledKernel.
//
// One LLJIT per process. Every kernel is its own module with a unique entry
// name, added under its own ResourceTracker so its code is freed when the
// CompiledKernel dies. Runtime symbols (loom_parallel_for, powf, allocation)
// are defined as absolute symbols; anything else LLVM emits calls to (memset,
// memcpy) resolves through the process.
#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/ExecutionEngine/Orc/CompileUtils.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/SubtargetFeature.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/Host.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include <dlfcn.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <set>

#include "codegen/runtime/host_cpu.h"
#include "codegen/llvm/emitter.h"
#include "codegen/llvm/llvm_jit.h"
#include "codegen/runtime/thread_pool.h"
#include "codegen/passes/cpu_loop_passes.h"
#include "ir/error.h"

namespace loom {

namespace {

std::string error_text(llvm::Error e) { return llvm::toString(std::move(e)); }

struct JITState {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::unique_ptr<llvm::orc::JITTargetMachineBuilder> jtmb;
  std::string cpu;
  std::string features;
  int native_width = 4;
  std::string init_error;
  std::set<std::string> vector_math;  // libmvec entry points defined in the JIT
};

// glibc's libmvec (x86-64 vector ABI: b = SSE 4 lanes, d = AVX2 8 lanes,
// e = AVX-512 16 lanes): vector powf for vector loops (exp, log, tanh, erf
// and sigmoid are emitted inline, vector_math.h; so is pow with a small
// integer or half-integer exponent).
void add_vector_math(JITState* st, llvm::orc::JITDylib& jd, const llvm::StringMap<bool>& host) {
  if (std::getenv("LOOM_NO_LIBMVEC")) return;
  void* lib = dlopen("libmvec.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return;
  std::vector<std::string> isas = {"bN4"};
  if (host.lookup("avx2")) isas.push_back("dN8");
  if (host.lookup("avx512f")) isas.push_back("eN16");
  llvm::orc::SymbolMap syms;
  for (const auto& isa : isas) {
    for (const char* fn : {"vv_powf"}) {
      std::string name = "_ZGV" + isa + fn;
      void* addr = dlsym(lib, name.c_str());
      if (!addr) continue;
      syms.insert({st->jit->mangleAndIntern(name),
                   llvm::JITEvaluatedSymbol(llvm::pointerToJITTargetAddress(addr),
                                            llvm::JITSymbolFlags::Exported)});
      st->vector_math.insert(name);
    }
  }
  if (syms.empty()) return;
  if (auto err = jd.define(llvm::orc::absoluteSymbols(std::move(syms)))) {
    llvm::consumeError(std::move(err));
    st->vector_math.clear();
  }
}

JITState* create_state() {
  auto* st = new JITState;
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::InitializeNativeTargetAsmParser();
  // LLVM 14's loop vectorizer groups strided accesses into interleaved wide
  // loads and stores even across a store and a later load of the same
  // element in one iteration: a tile of accumulators that several unrolled
  // taps update per iteration then adds to values loaded before the earlier
  // taps' stores, a wrong result (a depthwise conv whose 3 taps are split
  // 2 + 1, its channel loop left to LLVM). Loom emits its own vector code
  // where the schedule vectorizes; without the groups, LLVM vectorizes the
  // other strided loops with gathers and scatters or leaves them scalar.
  auto& options = llvm::cl::getRegisteredOptions();
  auto interleaved = options.find("enable-interleaved-mem-accesses");
  if (interleaved == options.end() ||
      interleaved->second->addOccurrence(0, "enable-interleaved-mem-accesses", "false")) {
    st->init_error = "cannot turn off the loop vectorizer's interleaved access groups";
    return st;
  }
  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb) {
    st->init_error = "cannot detect the host target: " + error_text(jtmb.takeError());
    return st;
  }
  jtmb->setCodeGenOptLevel(llvm::CodeGenOpt::Aggressive);
  st->cpu = jtmb->getCPU();
  st->features = jtmb->getFeatures().getString();
  llvm::StringMap<bool> host;
  llvm::sys::getHostCPUFeatures(host);
  st->native_width = host_vector_width();
  st->jtmb = std::make_unique<llvm::orc::JITTargetMachineBuilder>(*jtmb);
  auto jit = llvm::orc::LLJITBuilder()
                 .setJITTargetMachineBuilder(*jtmb)
                 .setCompileFunctionCreator([](llvm::orc::JITTargetMachineBuilder b)
                                                -> llvm::Expected<std::unique_ptr<
                                                    llvm::orc::IRCompileLayer::IRCompiler>> {
                   return std::make_unique<llvm::orc::ConcurrentIRCompiler>(std::move(b));
                 })
                 .create();
  if (!jit) {
    st->init_error = "cannot create the LLVM JIT: " + error_text(jit.takeError());
    return st;
  }
  st->jit = std::move(*jit);
  auto& jd = st->jit->getMainJITDylib();
  auto sym = [&](const char* name, const void* addr) {
    return std::make_pair(st->jit->mangleAndIntern(name),
                          llvm::JITEvaluatedSymbol(llvm::pointerToJITTargetAddress(addr),
                                                   llvm::JITSymbolFlags::Exported));
  };
  llvm::orc::SymbolMap runtime;
  runtime.insert(sym("loom_parallel_for", reinterpret_cast<const void*>(&loom_parallel_for)));
  runtime.insert(sym("powf", reinterpret_cast<const void*>(
                                 static_cast<float (*)(float, float)>(&::powf))));
  runtime.insert(sym("aligned_alloc", reinterpret_cast<const void*>(&::aligned_alloc)));
  runtime.insert(sym("free", reinterpret_cast<const void*>(&::free)));
  runtime.insert(sym("memset", reinterpret_cast<const void*>(&::memset)));
  runtime.insert(sym("memcpy", reinterpret_cast<const void*>(&::memcpy)));
  runtime.insert(sym("memmove", reinterpret_cast<const void*>(&::memmove)));
  if (auto err = jd.define(llvm::orc::absoluteSymbols(std::move(runtime)))) {
    st->init_error = "cannot define runtime symbols: " + error_text(std::move(err));
    return st;
  }
  auto gen = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      st->jit->getDataLayout().getGlobalPrefix());
  if (!gen) {
    st->init_error = "cannot search the process for symbols: " + error_text(gen.takeError());
    return st;
  }
  jd.addGenerator(std::move(*gen));
  add_vector_math(st, jd, host);
  return st;
}

JITState& state() {
  static JITState* st = create_state();
  if (!st->init_error.empty()) throw LoomError("LLVM backend: " + st->init_error);
  return *st;
}

std::string sanitize(const std::string& s) {
  std::string out;
  for (char c : s) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  return out;
}

void optimize(llvm::Module& m, llvm::TargetMachine* tm, int level) {
  if (level <= 0) return;
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions pto;
  pto.LoopUnrolling = true;
  pto.LoopVectorization = true;  // only matters for loops left scalar
  pto.SLPVectorization = true;
  llvm::PassBuilder pb(tm, pto);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::OptimizationLevel ol = level == 1   ? llvm::OptimizationLevel::O1
                               : level == 2 ? llvm::OptimizationLevel::O2
                                            : llvm::OptimizationLevel::O3;
  llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(ol);
  mpm.run(m, mam);
}

std::string emit_assembly(const llvm::Module& m, llvm::TargetMachine* tm) {
  auto clone = llvm::CloneModule(m);
  llvm::SmallVector<char, 0> buf;
  llvm::raw_svector_ostream os(buf);
  llvm::legacy::PassManager pm;
  if (tm->addPassesToEmitFile(pm, os, nullptr, llvm::CGFT_AssemblyFile)) return "(no assembly)";
  pm.run(*clone);
  return std::string(buf.begin(), buf.end());
}

class LLVMKernel final : public CompiledKernel {
 public:
  using Entry = void (*)(float* const*);
  LLVMKernel(llvm::orc::ResourceTrackerSP rt, Entry entry, size_t nargs, double seconds,
             std::string ir, std::string assembly)
      : rt_(std::move(rt)), entry_(entry), nargs_(nargs), seconds_(seconds), ir_(std::move(ir)),
        asm_(std::move(assembly)) {}
  ~LLVMKernel() override {
    if (rt_) llvm::consumeError(rt_->remove());
  }
  void operator()(const std::vector<float*>& args) const override {
    if (args.size() != nargs_)
      throw LoomError("LLVM kernel: expected " + std::to_string(nargs_) + " buffers, got " +
                      std::to_string(args.size()));
    entry_(args.data());
  }
  void run(float* const* args) const override { entry_(args); }
  double compile_seconds() const override { return seconds_; }
  size_t num_args() const override { return nargs_; }
  const std::string& ir_text() const override { return ir_; }
  const std::string& asm_text() const override { return asm_; }

 private:
  llvm::orc::ResourceTrackerSP rt_;
  Entry entry_;
  size_t nargs_;
  double seconds_;
  std::string ir_, asm_;
};

std::atomic<int64_t> g_kernel_counter{0};

}  // namespace

CompiledKernel::~CompiledKernel() = default;

std::string llvm_host_cpu_description() {
  JITState& st = state();
  return st.cpu + " (" + st.features + ")";
}

int llvm_native_vector_width() { return state().native_width; }

namespace {

// The kernel's module, verified and optimized: what compile_llvm runs and
// compile_llvm_object writes, so the exported object is the timed program.
struct OptimizedModule {
  std::unique_ptr<llvm::LLVMContext> ctx;
  std::unique_ptr<llvm::Module> module;
  std::string ir;
  double emit_ms = 0, optimize_ms = 0;
};

OptimizedModule build_module(JITState& st, const LoweredFunc& f, const LLVMCompileOptions& opts,
                             const std::string& entry, llvm::TargetMachine* tm,
                             const std::function<void(llvm::Module&, llvm::Function*)>& extend = {}) {
  auto t0 = std::chrono::steady_clock::now();
  OptimizedModule out;
  out.ctx = std::make_unique<llvm::LLVMContext>();
  out.module = std::make_unique<llvm::Module>(entry, *out.ctx);
  llvm::Module& module = *out.module;
  module.setDataLayout(st.jit->getDataLayout());
  module.setTargetTriple(st.jit->getTargetTriple().str());

  llvm_backend::EmitOptions eo;
  eo.num_threads = std::max(opts.num_threads, 1);
  eo.vector_width = opts.vector_width > 0 ? opts.vector_width : st.native_width;
  eo.cpu = st.cpu;
  eo.features = st.features;
  eo.vector_math = st.vector_math;
  const LoweredFunc vf = prepare_cpu_loops(f, eo.vector_width);
  llvm_backend::IREmitter emitter(vf, module, eo);
  llvm::Function* fn = emitter.emit_entry(entry);
  if (extend) extend(module, fn);

  std::string verify_msg;
  llvm::raw_string_ostream vos(verify_msg);
  if (llvm::verifyModule(module, &vos)) {
    vos.flush();
    throw LoomError("LLVM backend: invalid IR for " + f.name + ": " + verify_msg.substr(0, 2000));
  }
  if (opts.dump_ir) {
    llvm::raw_string_ostream os(out.ir);
    os << "; ---- before optimization\n" << module;
  }
  auto t_emit = std::chrono::steady_clock::now();
  optimize(module, tm, opts.opt_level);
  auto t_opt = std::chrono::steady_clock::now();
  if (opts.dump_ir) {
    llvm::raw_string_ostream os(out.ir);
    os << "; ---- after optimization\n" << module;
    os.flush();
  }
  auto ms = [](auto a, auto b) { return std::chrono::duration<double>(b - a).count() * 1e3; };
  out.emit_ms = ms(t0, t_emit);
  out.optimize_ms = ms(t_emit, t_opt);
  return out;
}

// `void typed(float* a0, ..., float* aN)` calling the packed entry: the C
// signature of the exported object, which the C backend's unit also has.
void add_typed_wrapper(llvm::Module& m, llvm::Function* packed, const std::string& name, size_t nargs) {
  llvm::LLVMContext& ctx = m.getContext();
  auto* fptr = llvm::Type::getFloatPtrTy(ctx);
  std::vector<llvm::Type*> params(nargs, fptr);
  auto* fty = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), params, false);
  auto* fn = llvm::Function::Create(fty, llvm::GlobalValue::ExternalLinkage, name, &m);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", fn));
  auto* arr_ty = llvm::ArrayType::get(fptr, std::max<size_t>(nargs, 1));
  auto* arr = b.CreateAlloca(arr_ty);
  for (size_t i = 0; i < nargs; ++i)
    b.CreateStore(fn->getArg(static_cast<unsigned>(i)), b.CreateConstInBoundsGEP2_64(arr_ty, arr, 0, i));
  b.CreateCall(packed, {b.CreateConstInBoundsGEP2_64(arr_ty, arr, 0, 0)});
  b.CreateRetVoid();
}

}  // namespace

std::unique_ptr<CompiledKernel> compile_llvm(const LoweredFunc& f, const LLVMCompileOptions& opts) {
  auto t0 = std::chrono::steady_clock::now();
  JITState& st = state();
  auto tm_or = st.jtmb->createTargetMachine();
  if (!tm_or) throw LoomError("LLVM backend: cannot create a target machine: " +
                              error_text(tm_or.takeError()));
  std::unique_ptr<llvm::TargetMachine> tm = std::move(*tm_or);

  int64_t id = g_kernel_counter.fetch_add(1);
  std::string entry = "loom_k" + std::to_string(id) + "_" + sanitize(f.name);
  OptimizedModule built = build_module(st, f, opts, entry, tm.get());
  std::unique_ptr<llvm::LLVMContext> ctx = std::move(built.ctx);
  std::unique_ptr<llvm::Module> module = std::move(built.module);
  std::string ir = std::move(built.ir);
  std::string assembly;
  if (opts.dump_ir) assembly = emit_assembly(*module, tm.get());

  auto rt = st.jit->getMainJITDylib().createResourceTracker();
  if (auto err = st.jit->addIRModule(rt, llvm::orc::ThreadSafeModule(std::move(module), std::move(ctx))))
    throw LoomError("LLVM backend: cannot add module: " + error_text(std::move(err)));
  auto sym = st.jit->lookup(entry);
  if (!sym) {
    std::string msg = error_text(sym.takeError());
    llvm::consumeError(rt->remove());
    throw LoomError("LLVM backend: cannot compile " + f.name + ": " + msg);
  }
  auto fn = reinterpret_cast<LLVMKernel::Entry>(static_cast<uintptr_t>(sym->getAddress()));
  auto t_end = std::chrono::steady_clock::now();
  double seconds = std::chrono::duration<double>(t_end - t0).count();
  if (std::getenv("LOOM_LLVM_TIMING")) {
    double total_ms = seconds * 1e3;
    std::fprintf(stderr, "[loom llvm] %s: emit %.1f ms, optimize %.1f ms, codegen %.1f ms\n",
                 f.name.c_str(), built.emit_ms, built.optimize_ms,
                 total_ms - built.emit_ms - built.optimize_ms);
  }
  return std::make_unique<LLVMKernel>(std::move(rt), fn, f.args.size(), seconds, std::move(ir),
                                      std::move(assembly));
}

std::string compile_llvm_object(const LoweredFunc& f, const std::string& name,
                                const LLVMCompileOptions& opts) {
  JITState& st = state();
  // Position-independent, so that the object links into PIE executables and
  // shared libraries; otherwise the JIT's target machine (CPU, features,
  // optimization levels).
  llvm::orc::JITTargetMachineBuilder jtmb = *st.jtmb;
  jtmb.setRelocationModel(llvm::Reloc::PIC_);
  auto tm_or = jtmb.createTargetMachine();
  if (!tm_or) throw LoomError("LLVM backend: cannot create a target machine: " +
                              error_text(tm_or.takeError()));
  std::unique_ptr<llvm::TargetMachine> tm = std::move(*tm_or);
  OptimizedModule built =
      build_module(st, f, opts, name + "_packed", tm.get(), [&](llvm::Module& m, llvm::Function* packed) {
        add_typed_wrapper(m, packed, name, f.args.size());
      });
  llvm::SmallVector<char, 0> buf;
  llvm::raw_svector_ostream os(buf);
  llvm::legacy::PassManager pm;
  if (tm->addPassesToEmitFile(pm, os, nullptr, llvm::CGFT_ObjectFile))
    throw LoomError("LLVM backend: the target cannot write object files");
  pm.run(*built.module);
  return std::string(buf.begin(), buf.end());
}

}  // namespace loom
