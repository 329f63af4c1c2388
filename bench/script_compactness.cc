// Compactness of the script format: bytes and neutral lexical tokens per trace of the
// compact script, TVM's JSON and TVM's Python text, over random traces of the primitives
// on every op kind and the hand-written expert scripts. Prints a Markdown table.
// Usage: bench_script_compactness [--random N] [--steps S] [--expert DIR]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "dragon/ops/op_registry.h"
#include "dragon/schedule/trace_json.h"
#include "dragon/script/lexical_tokens.h"
#include "dragon/script/script.h"
#include "dragon/script/trace_python.h"
#include "dragon/support/error.h"
#include "dragon/support/file.h"
#include "unit/script/random_traces.h"

namespace {

using dragon::schedule::Trace;

struct Sizes {
  size_t bytes = 0;
  size_t tokens = 0;
};

struct Measured {
  Sizes compact, json, python;
  size_t instructions = 0;
};

Sizes measure(const std::string& text) { return {text.size(), dragon::script::count_lexical_tokens(text)}; }

Measured measure(const Trace& trace) {
  Measured m;
  m.compact = measure(dragon::script::encode(trace));
  m.json = measure(dragon::schedule::trace_to_json(trace));
  m.python = measure(dragon::script::trace_to_python(trace));
  m.instructions = trace.size();
  return m;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

void print_row(const std::string& name, const std::vector<Measured>& corpus) {
  Measured total;
  std::vector<double> json_ratio, python_ratio;
  for (const Measured& m : corpus) {
    total.compact.bytes += m.compact.bytes;
    total.compact.tokens += m.compact.tokens;
    total.json.bytes += m.json.bytes;
    total.json.tokens += m.json.tokens;
    total.python.bytes += m.python.bytes;
    total.python.tokens += m.python.tokens;
    total.instructions += m.instructions;
    if (m.compact.tokens > 0) {
      json_ratio.push_back(static_cast<double>(m.json.tokens) / static_cast<double>(m.compact.tokens));
      python_ratio.push_back(static_cast<double>(m.python.tokens) / static_cast<double>(m.compact.tokens));
    }
  }
  const double n = static_cast<double>(std::max<size_t>(corpus.size(), 1));
  auto per = [&](size_t x) { return static_cast<double>(x) / n; };
  std::printf("| %s | %zu | %.1f | %.0f / %.0f | %.0f / %.0f | %.0f / %.0f | %.2fx (%.2fx) | %.2fx (%.2fx) | %.2fx | %.2fx |\n",
              name.c_str(), corpus.size(), per(total.instructions), per(total.compact.bytes), per(total.compact.tokens),
              per(total.json.bytes), per(total.json.tokens), per(total.python.bytes), per(total.python.tokens),
              static_cast<double>(total.json.tokens) / static_cast<double>(total.compact.tokens), median(json_ratio),
              static_cast<double>(total.python.tokens) / static_cast<double>(total.compact.tokens), median(python_ratio),
              static_cast<double>(total.json.bytes) / static_cast<double>(total.compact.bytes),
              static_cast<double>(total.python.bytes) / static_cast<double>(total.compact.bytes));
}

int run(int argc, char** argv) {
  int random = 1000, steps = 10;
  std::string expert = std::string(DRAGON_SOURCE_DIR) + "/data/scripts/expert";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw dragon::UserError(a + " needs a value");
      return argv[++i];
    };
    if (a == "--random") random = std::stoi(next());
    else if (a == "--steps") steps = std::stoi(next());
    else if (a == "--expert") expert = next();
    else throw dragon::UserError("unknown argument " + a + " (usage: [--random N] [--steps S] [--expert DIR])");
  }
  const auto& kinds = dragon::ops::OpRegistry::global().kinds();
  // The random traces as recorded (the generator's lookups included), and simplified:
  // lookups and samples nothing uses dropped, as Trace::simplified does for search.
  std::vector<Measured> random_corpus, simplified_corpus, expert_corpus;
  for (int i = 0; i < random; ++i) {
    const auto& op = kinds[static_cast<size_t>(i) % kinds.size()];
    dragon::ir::PrimFunc func = dragon::ops::OpRegistry::global().make_workload(op.name).func;
    Trace trace = dragon::script::testing::schedule_trace(func, i + 1, steps);
    random_corpus.push_back(measure(trace));
    simplified_corpus.push_back(measure(trace.simplified()));
  }
  std::istringstream index(dragon::read_text_file(expert + "/index.txt"));
  std::string line;
  std::vector<std::pair<std::string, Measured>> experts;
  while (std::getline(index, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::string file = line.substr(0, line.find(' '));
    Measured m = measure(dragon::script::decode(dragon::read_text_file(expert + "/" + file)));
    experts.emplace_back(file, m);
    expert_corpus.push_back(m);
  }
  std::printf("Tokens: runs of ASCII letters, runs of digits, every other non-blank byte; whitespace not counted.\n");
  std::printf("JSON: trace_to_json (no spaces). Python: TVM's Trace.__str__ form (trace_to_python).\n\n");
  std::printf("| corpus | traces | instructions/trace | compact bytes / tokens | JSON bytes / tokens | Python bytes / "
              "tokens | JSON/compact tokens (median) | Python/compact tokens (median) | JSON/compact bytes | "
              "Python/compact bytes |\n");
  std::printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  print_row("random (" + std::to_string(steps) + " steps, all " + std::to_string(kinds.size()) + " op kinds)",
            random_corpus);
  print_row("random, simplified", simplified_corpus);
  print_row("expert scripts", expert_corpus);
  for (const auto& [file, m] : experts) print_row("  " + file, {m});
  std::vector<Measured> all = random_corpus;
  all.insert(all.end(), expert_corpus.begin(), expert_corpus.end());
  print_row("all", all);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const dragon::UserError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
