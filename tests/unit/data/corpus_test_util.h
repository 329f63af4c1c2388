// Helpers of the corpus tests: a scratch folder of corpus files, and the named corpora
// built once per test program (building "full" takes seconds).
#pragma once

#include <filesystem>
#include <string>

#include "dragon/data/corpus.h"

namespace dragon::data::testing {

// A fresh folder under the system temp dir, removed when the object goes.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& tag);
  ~ScratchDir();
  const std::filesystem::path& path() const { return path_; }
  // Writes `text` to path()/relative, making folders; returns the full path.
  std::string write(const std::string& relative, const std::string& text) const;

 private:
  std::filesystem::path path_;
};

// The named corpus from the source tree's data/corpus, built on first use.
const Corpus& cached_corpus(const std::string& name);

}  // namespace dragon::data::testing
