# Sourced by scripts/test.sh --sanitize and scripts/fuzz.sh: configures
# build-sanitize/ (clang-14, ASan + UBSan, libFuzzer coverage) once and sets
# the sanitizers' options: every report is fatal, leaks are reported.
sanitize_build=build-sanitize
if [ ! -f "$sanitize_build/CMakeCache.txt" ]; then
  CC=clang-14 CXX=clang++-14 cmake -S . -B "$sanitize_build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DLOOM_SANITIZE=ON -DLOOM_FUZZ=ON >/dev/null
fi
# A kernel's fault must end its worker as it does without the sanitizers
# (ASan's report of a segfault in JIT-compiled code takes seconds: the
# measurer would see a timeout), so ASan leaves those signals alone.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:handle_segv=0:handle_sigbus=0:handle_sigfpe=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
