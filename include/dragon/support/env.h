// The one place environment variables are read. Each is read once and logged at
// debug level; callers ask here instead of calling getenv.
#pragma once

#include <optional>
#include <string>

namespace dragon {

// DRAGON_VERIFY_IR: "1" turns IR verification on, "0" off; unset: on in debug builds.
std::optional<bool> env_verify_ir();
// DRAGON_CACHE_DIR: where compiled kernels are cached (runtime/compile_cache.h); HOME.
std::optional<std::string> env_cache_dir();
std::optional<std::string> env_home();
// DRAGON_CORPUS_DIR: where the workload corpus files live (data/corpus.h).
std::optional<std::string> env_corpus_dir();

}  // namespace dragon
