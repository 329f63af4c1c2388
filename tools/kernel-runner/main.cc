// dragon-kernel-runner: runs one untrusted kernel for the harness in a child process
// (include/dragon/harness/kernel_runner.h). Started only by the harness, never by hand.
#include "dragon/harness/kernel_runner.h"

int main(int argc, char** argv) { return dragon::harness::kernel_runner::runner_main(argc, argv); }
