#include "dragon/data/data_set_reader.h"

#include <filesystem>

#include <fmt/format.h>

#include "dragon/support/compressed_jsonl.h"
#include "dragon/support/error.h"

namespace dragon::data {

DataSetContents read_data_set(const std::string& dir) {
  namespace fs = std::filesystem;
  if (!fs::is_regular_file(fs::path(dir) / "manifest.json")) {
    throw UserError(fmt::format("{}: not a data set (no manifest.json)", dir));
  }
  DataSetContents out{read_manifest(dir), {}};
  if (out.manifest.shards.empty()) throw UserError(fmt::format("{}: the data set's manifest lists no shard", dir));
  for (const ShardSummary& shard : out.manifest.shards) {
    const std::string path = (fs::path(dir) / shard.file_name()).string();
    const std::vector<std::string> lines = support::read_compressed_jsonl(path);
    for (size_t i = 0; i < lines.size(); ++i) {
      const int line = static_cast<int>(i + 1);
      out.examples.push_back(LocatedExample{parse_example_line(lines[i], path, line), path, line});
    }
  }
  return out;
}

}  // namespace dragon::data
