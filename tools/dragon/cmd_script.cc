// dragon script encode|decode|check|postproc|kinds: convert between TVM's JSON traces and
// compact scripts (or print TVM's Python form), check a script against a workload,
// realise a sketch's annotations with the postprocessors, print the table of instruction
// kinds (docs/script-format.md).
#include <cstdio>

#include "commands.h"
#include "dragon/schedule/trace_json.h"
#include "dragon/script/script.h"
#include "dragon/script/script_file.h"
#include "dragon/script/script_schema.h"
#include "dragon/script/trace_python.h"
#include "dragon/search/rewrite_cooperative_fetch.h"
#include "dragon/search/rewrite_unroll.h"
#include "function_source.h"

namespace dragon::cli {

Command add_script_command(CLI::App& app) {
  CLI::App* sub = app.add_subcommand("script", "Convert and check compact schedule scripts");
  sub->require_subcommand(1);

  auto encode_file = std::make_shared<std::string>();
  CLI::App* encode = sub->add_subcommand("encode", "Print the canonical compact script of a trace (JSON or script)");
  encode->add_option("trace", *encode_file, "A trace in TVM's JSON layout (or a compact script to canonicalize)")
      ->required();
  auto python = std::make_shared<bool>(false);
  encode->add_flag("--python", *python, "Print TVM's Python text form instead (for comparison)");

  auto decode_file = std::make_shared<std::string>();
  CLI::App* decode = sub->add_subcommand("decode", "Print the TVM-layout JSON trace of a compact script");
  decode->add_option("script", *decode_file, "A compact script (or a JSON trace to normalize)")->required();

  auto source = std::make_shared<FunctionSource>();
  auto check_file = std::make_shared<std::string>();
  CLI::App* check = sub->add_subcommand(
      "check", "Decode a script and apply it to an op spec; report the first error with its line and instruction");
  source->add_options(check);
  check->add_option("script", *check_file, "A compact script or a JSON trace")->required();

  auto post_source = std::make_shared<FunctionSource>();
  auto post_file = std::make_shared<std::string>();
  CLI::App* postproc = sub->add_subcommand(
      "postproc",
      "Apply a script to an op spec, run the postprocessors on it (RewriteCooperativeFetch: annotated "
      "shared-memory copies spread over the kernel's threads and vectorized; RewriteUnroll: a sampled unroll "
      "step handed to every loop nest) and print the whole script");
  post_source->add_options(postproc);
  postproc->add_option("script", *post_file, "A compact script or a JSON trace")->required();

  CLI::App* kinds = sub->add_subcommand(
      "kinds", "Print the table of instruction kinds (mnemonic, operands, outputs, decision) in Markdown, as "
               "docs/script-format.md holds it");

  return [=] {
    if (encode->parsed()) {
      const schedule::Trace trace = script::load(*encode_file).trace;
      std::fputs((*python ? script::trace_to_python(trace) : script::encode(trace)).c_str(), stdout);
    } else if (decode->parsed()) {
      std::puts(schedule::trace_to_json(script::load(*decode_file).trace).c_str());
    } else if (check->parsed()) {
      std::string label;
      ir::PrimFunc func = source->load(&label);
      script::ScriptFile script = script::load(*check_file);
      script::replay(func, script);
      std::printf("%s: %zu instructions apply to %s\n", check_file->c_str(), script.trace.size(), label.c_str());
    } else if (postproc->parsed()) {
      schedule::Schedule sch = script::replay(post_source->load(), script::load(*post_file));
      const int fetches = search::rewrite_cooperative_fetch(sch);
      const int unrolled = search::rewrite_unroll(sch);
      std::fputs(script::encode(sch.trace()).c_str(), stdout);
      std::fprintf(stderr, "postproc: %d cooperative fetches rewritten, %d loop nests given an unroll step\n", fetches,
                   unrolled);
    } else if (kinds->parsed()) {
      std::fputs(script::kinds_markdown_table().c_str(), stdout);
    }
    return 0;
  };
}

}  // namespace dragon::cli
