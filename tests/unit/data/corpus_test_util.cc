// Scratch folders and cached corpora for the corpus tests.
#include "corpus_test_util.h"

#include <fstream>
#include <map>
#include <random>

namespace dragon::data::testing {

ScratchDir::ScratchDir(const std::string& tag) {
  std::random_device device;
  path_ = std::filesystem::temp_directory_path() / ("dragon-" + tag + "-" + std::to_string(device()));
  std::filesystem::create_directories(path_);
}

ScratchDir::~ScratchDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string ScratchDir::write(const std::string& relative, const std::string& text) const {
  const std::filesystem::path full = path_ / relative;
  std::filesystem::create_directories(full.parent_path());
  std::ofstream(full) << text;
  return full.string();
}

const Corpus& cached_corpus(const std::string& name) {
  static std::map<std::string, Corpus> built;
  auto it = built.find(name);
  if (it == built.end()) {
    CorpusOptions options;
    options.corpus_dir = std::string(DRAGON_SOURCE_DIR) + "/data/corpus";
    it = built.emplace(name, build_corpus(name, options)).first;
  }
  return it->second;
}

}  // namespace dragon::data::testing
