// Golden generated kernels (golden_cases.h): each case's stored script, replayed, lowered
// and printed, must reproduce its stored kernel byte for byte. To regenerate after an
// intended change: tests/golden/codegen/README.md.
#include <gtest/gtest.h>

#include <filesystem>

#include "dragon/support/file.h"
#include "golden_cases.h"

namespace dragon::codegen {
namespace {

TEST(CodegenGolden, StoredKernelsAreReproducedByteForByte) {
  for (const testing::GoldenCase& c : testing::golden_cases()) {
    SCOPED_TRACE(c.name);
    std::string stem = testing::golden_directory() + "/" + c.name;
    std::string expected_path = stem + (c.cuda ? ".cu" : ".cc");
    ASSERT_TRUE(std::filesystem::exists(expected_path)) << expected_path << " is missing; see README.md there";
    std::string actual = testing::golden_kernel(c, read_text_file(stem + ".json"));
    std::string expected = read_text_file(expected_path);
    if (actual == expected) continue;
    size_t at = 0;
    while (at < actual.size() && at < expected.size() && actual[at] == expected[at]) ++at;
    size_t line = 1 + static_cast<size_t>(std::count(expected.begin(), expected.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
    ADD_FAILURE() << expected_path << " differs from the generated kernel from line " << line << ":\n--- expected\n"
                  << expected.substr(at > 200 ? at - 200 : 0, 400) << "\n--- generated\n"
                  << actual.substr(at > 200 ? at - 200 : 0, 400);
  }
}

}  // namespace
}  // namespace dragon::codegen
