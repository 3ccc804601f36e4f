// The runtime an exported kernel links with, as C source: loom_parallel_for,
// the entry point that the parallel loops of generated code call (the LLVM
// backend's object files and the C backend's units in CParallel::kRuntime
// mode). It is a C port of codegen/runtime/thread_pool.h's scheduling (the same
// chunking: 4 chunks per thread, each thread runs its own contiguous run and
// then helps the others; workers spin briefly, then sleep) on POSIX
// threads, so that an exported kernel keeps the thread behaviour it was
// timed with. `loom export` writes the two texts as loom_runtime.h and
// loom_runtime.c next to the kernels.
#pragma once

namespace loom {

// loom_runtime.h: the declaration of loom_parallel_for.
const char* c_runtime_header();
// loom_runtime.c: its definition (C11, pthreads; compile with -pthread).
const char* c_runtime_source();

}  // namespace loom
