// The results file of `dragon bench` (JSON): everything a report or a later comparison
// needs, written after every problem so an interrupted run keeps what it measured, and
// read back by `dragon bench report`.
#pragma once

#include <string>

#include "dragon/bench/suite_run.h"

namespace dragon::bench {

std::string suite_run_to_json(const SuiteRun& run, int indent = 2);

// Throws UserError naming the file and what is missing or malformed.
SuiteRun load_suite_run(const std::string& path);

}  // namespace dragon::bench
