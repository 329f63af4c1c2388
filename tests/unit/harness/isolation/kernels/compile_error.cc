// Does not compile: the run must be kFailed with the compiler's message naming this file.
extern "C" void compile_error(void* const* args) {
  undeclared_variable = args;
}
