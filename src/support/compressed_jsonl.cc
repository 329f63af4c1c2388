// zstd-compressed JSON lines through libzstd's streaming API (any frame a `zstd` CLI wrote
// reads back, several frames concatenated included).
#include "dragon/support/compressed_jsonl.h"

#include <zstd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>

#include <fmt/format.h>

#include "dragon/support/error.h"
#include "dragon/support/file.h"

namespace dragon::support {
namespace {

struct CCtxDeleter {
  void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};
struct DCtxDeleter {
  void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
};

}  // namespace

void write_compressed_jsonl(const std::string& path, std::span<const std::string> lines, int level) {
  std::string text;
  for (const std::string& line : lines) {
    text += line;
    text += '\n';
  }
  std::unique_ptr<ZSTD_CCtx, CCtxDeleter> cctx(ZSTD_createCCtx());
  if (!cctx) throw UserError(fmt::format("{}: cannot start zstd compression", path));
  ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_compressionLevel, level);
  // A checksum in the frame, so a reader tells a damaged shard from a good one.
  ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_checksumFlag, 1);
  std::string compressed(ZSTD_compressBound(text.size()), '\0');
  const size_t size = ZSTD_compress2(cctx.get(), compressed.data(), compressed.size(), text.data(), text.size());
  if (ZSTD_isError(size)) throw UserError(fmt::format("{}: zstd: {}", path, ZSTD_getErrorName(size)));
  compressed.resize(size);

  write_text_file(path, compressed);
}

std::vector<std::string> read_compressed_jsonl(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
  const std::string compressed((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (compressed.empty()) throw UserError(fmt::format("{}: empty file, not a zstd frame", path));

  std::unique_ptr<ZSTD_DCtx, DCtxDeleter> dctx(ZSTD_createDCtx());
  if (!dctx) throw UserError(fmt::format("{}: cannot start zstd decompression", path));
  std::string text;
  std::string chunk(ZSTD_DStreamOutSize(), '\0');
  ZSTD_inBuffer input{compressed.data(), compressed.size(), 0};
  size_t last = 0;  // 0 when the last frame ended; else more input was expected
  while (input.pos < input.size) {
    ZSTD_outBuffer output{chunk.data(), chunk.size(), 0};
    last = ZSTD_decompressStream(dctx.get(), &output, &input);
    if (ZSTD_isError(last)) throw UserError(fmt::format("{}: not a sound zstd file ({})", path, ZSTD_getErrorName(last)));
    text.append(chunk.data(), output.pos);
  }
  // Flush what the decoder still holds once the input is consumed.
  for (;;) {
    ZSTD_outBuffer output{chunk.data(), chunk.size(), 0};
    if (last == 0) break;
    last = ZSTD_decompressStream(dctx.get(), &output, &input);
    if (ZSTD_isError(last)) throw UserError(fmt::format("{}: not a sound zstd file ({})", path, ZSTD_getErrorName(last)));
    text.append(chunk.data(), output.pos);
    if (output.pos == 0) break;
  }
  if (last != 0) throw UserError(fmt::format("{}: truncated zstd file (the last frame is incomplete)", path));
  if (!text.empty() && text.back() != '\n') throw UserError(fmt::format("{}: the last line has no newline", path));

  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

}  // namespace dragon::support
