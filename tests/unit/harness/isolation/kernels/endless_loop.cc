// Never returns (a volatile counter keeps the loop from being optimised away): kTimedOut.
extern "C" void endless_loop(void* const*) {
  volatile unsigned long spins = 0;
  for (;;) spins = spins + 1;
}
