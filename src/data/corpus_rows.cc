// Reading the KIND/NAME/VALUE rows of corpus files.
#include "corpus_rows.h"

#include <sstream>

#include <fmt/format.h>

#include "dragon/support/error.h"
#include "dragon/support/file.h"

namespace dragon::data {

std::vector<CorpusRow> read_corpus_rows(const std::string& path, const std::string& label) {
  std::vector<CorpusRow> rows;
  std::istringstream lines(read_text_file(path));
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    std::vector<std::string> fields = split_list(line, '\t');
    if (fields.size() != 3) {
      throw UserError(fmt::format("{}:{}: expected 3 tab-separated fields (kind, name, value), got {}", label, number,
                                  fields.size()));
    }
    for (const std::string& field : fields) {
      if (field.empty()) throw UserError(fmt::format("{}:{}: an empty field", label, number));
    }
    rows.push_back(CorpusRow{fields[0], fields[1], fields[2], number});
  }
  return rows;
}

std::string row_where(const std::string& label, const CorpusRow& row) { return fmt::format("{}:{}", label, row.line); }

std::vector<std::string> split_list(const std::string& text, char separator) {
  std::vector<std::string> parts;
  if (text.empty()) return parts;
  size_t start = 0;
  while (true) {
    const size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return parts;
}

}  // namespace dragon::data
