// Proposals as JSON lines (proposal_lines.h).
#include "proposal_lines.h"

#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dragon/support/error.h"

namespace dragon::cli {

std::string proposal_line(const model::Proposal& p) {
  nlohmann::json line{{"attempt", p.attempt}, {"script", p.script}, {"stop", p.stop},
                      {"tokens", p.tokens},   {"seconds", p.seconds}, {"constraint_seconds", p.constraint_seconds}};
  if (p.ends_refused > 0) {
    line["ends_refused"] = p.ends_refused;
    line["last_refusal"] = p.last_refusal;
  }
  return line.dump();
}

std::vector<model::Proposal> read_proposal_lines(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UserError(fmt::format("cannot read the model's proposals '{}'", path));
  std::vector<model::Proposal> out;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    try {
      const nlohmann::json j = nlohmann::json::parse(line);
      model::Proposal p;
      p.attempt = j.at("attempt").get<int>();
      p.script = j.at("script").get<std::string>();
      p.stop = j.at("stop").get<std::string>();
      p.tokens = j.at("tokens").get<int64_t>();
      p.seconds = j.at("seconds").get<double>();
      p.constraint_seconds = j.value("constraint_seconds", 0.0);
      p.ends_refused = j.value("ends_refused", int64_t{0});
      p.last_refusal = j.value("last_refusal", std::string());
      out.push_back(std::move(p));
    } catch (const nlohmann::json::exception& e) {
      throw UserError(fmt::format("{}:{}: not a proposal: {}", path, number, e.what()));
    }
  }
  return out;
}

}  // namespace dragon::cli
