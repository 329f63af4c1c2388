// Reading a data set back (docs/data-set.md): every example of the shards its manifest
// lists, in manifest order, each with the file and line it came from so that a later
// error can name them. Not the writer (dataset_builder.h) and not the checker
// (dataset_check.h), which also replays scripts; this only parses.
#pragma once

#include <string>
#include <vector>

#include "dragon/data/example.h"
#include "dragon/data/manifest.h"

namespace dragon::data {

struct LocatedExample {
  Example example;
  std::string file;  // the shard's path
  int line = 0;      // 1-based
};

struct DataSetContents {
  Manifest manifest;
  std::vector<LocatedExample> examples;
};

// Throws UserError naming the folder when it holds no manifest or the manifest lists no
// shard, and FILE:LINE for a line that does not parse (parse_example_line).
DataSetContents read_data_set(const std::string& dir);

}  // namespace dragon::data
