// fusiond_compile_worker: a compile worker process (cache/compile_worker.h)
// serving jobs on fd 0. fusiond starts itself with --compile-worker instead;
// this binary is for the tests and for running workers on their own.
#include "cache/compile_worker.h"

int main() { return fusiond::RunCompileWorker(0); }
