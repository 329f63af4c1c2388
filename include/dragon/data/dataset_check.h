// Checking a data set directory against everything it claims (what `dragon data stats`
// runs): every shard the manifest lists is present and decodes; every line parses
// (example.h); every script decodes (script::decode) and is canonical; every spec rebuilds
// the function its recorded hash names; every example sits in the shard its hash assigns;
// and the counts and token statistics recomputed from the lines equal the manifest's.
// Not a repair tool: it reports the first problem and stops.
#pragma once

#include <cstdint>
#include <string>

#include "dragon/data/manifest.h"

namespace dragon::data {

struct CheckReport {
  Manifest manifest;
  int64_t shards = 0;    // shard files checked
  int64_t examples = 0;  // lines checked
  int64_t scripts = 0;   // scripts decoded (targets and existing scripts)
};

// Throws UserError on the first problem: "DIR/manifest.json: why" for the manifest,
// "shard-0-of-4.jsonl.zst:17: why" for a line, "shard-0-of-4.jsonl.zst: why" for a file.
CheckReport check_dataset(const std::string& dir);

}  // namespace dragon::data
