// The row format shared by every corpus file (data/corpus/): tab-separated
// "KIND<TAB>NAME<TAB>VALUE" lines, '#' comments and blank lines skipped. Not the meaning
// of the rows: model_file.h, op_sweep.h and split_rules.h read those.
#pragma once

#include <string>
#include <vector>

namespace dragon::data {

struct CorpusRow {
  std::string kind;   // "model", "op", "sweep", ...
  std::string name;
  std::string value;
  int line = 0;       // 1-based line in the file
};

// Reads `path`; `label` is how errors name the file ("models/gpt2.tsv"). Throws UserError
// "LABEL:LINE: expected 3 tab-separated fields ..." for a row of another width, and
// "cannot read PATH" for a missing file.
std::vector<CorpusRow> read_corpus_rows(const std::string& path, const std::string& label);

// "LABEL:LINE".
std::string row_where(const std::string& label, const CorpusRow& row);

// Splits "a,b,c" at commas (no trimming; an empty list for empty text).
std::vector<std::string> split_list(const std::string& text, char separator = ',');

}  // namespace dragon::data
