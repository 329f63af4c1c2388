// JSON lines compressed with zstd (one frame; `zstd -dc FILE` reads it): the data set's
// shard files. Written to FILE.tmp and renamed, so a reader never sees half a shard and a
// run killed while writing leaves the previous shard as it was. Not the lines' content
// (example.h).
#pragma once

#include <span>
#include <string>
#include <vector>

namespace dragon::support {

// Writes `lines` (each without its newline) as newline-terminated lines, compressed at
// zstd level `level`. Throws UserError naming the path when it cannot be written.
void write_compressed_jsonl(const std::string& path, std::span<const std::string> lines, int level = 9);

// The lines of a file write_compressed_jsonl wrote (or `zstd` compressed), without their
// newlines. Throws UserError "PATH: why" when the file cannot be read, is not zstd, is
// truncated or corrupt (zstd's checksum), or does not end in a newline.
std::vector<std::string> read_compressed_jsonl(const std::string& path);

}  // namespace dragon::support
