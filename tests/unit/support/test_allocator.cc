// The allocator the build chose serves the programs' malloc (cmake/dragon_allocator.cmake):
// with jemalloc linked, its mallctl answers and counts this thread's allocations, so a
// link that dropped or shadowed it fails here rather than going unnoticed as slower tuning.
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace {

using Mallctl = int (*)(const char*, void*, size_t*, void*, size_t);

Mallctl find_mallctl() { return reinterpret_cast<Mallctl>(::dlsym(RTLD_DEFAULT, "mallctl")); }

TEST(Allocator, TheChosenAllocatorServesMalloc) {
#if DRAGON_EXPECT_JEMALLOC
  Mallctl mallctl = find_mallctl();
  ASSERT_NE(mallctl, nullptr) << "built with DRAGON_MALLOC=jemalloc, but the process has no jemalloc";
  const char* version = nullptr;
  size_t size = sizeof(version);
  ASSERT_EQ(mallctl("version", &version, &size, nullptr, 0), 0);
  ASSERT_NE(version, nullptr);
  // The bytes this thread allocated, before and after a malloc: only jemalloc's malloc counts.
  auto allocated = [&] {
    uint64_t epoch = 1;
    size_t epoch_size = sizeof(epoch);
    mallctl("epoch", &epoch, &epoch_size, &epoch, epoch_size);
    uint64_t bytes = 0;
    size_t bytes_size = sizeof(bytes);
    EXPECT_EQ(mallctl("thread.allocated", &bytes, &bytes_size, nullptr, 0), 0);
    return bytes;
  };
  const uint64_t before = allocated();
  void* block = std::malloc(1 << 20);
  ASSERT_NE(block, nullptr);
  std::memset(block, 1, 1 << 20);
  const uint64_t after = allocated();
  std::free(block);
  EXPECT_GE(after - before, uint64_t{1} << 20) << "jemalloc " << version << " did not serve this malloc";
#else
  GTEST_SKIP() << "built with the C library's malloc (DRAGON_MALLOC=system, or libjemalloc not found)";
#endif
}

}  // namespace
