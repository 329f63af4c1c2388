// Text, JSON and HTML renderings of a profile report.
#include "dragon/profile/report_format.h"

#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "dragon/support/html.h"

namespace dragon::profile {
namespace {

std::string ms(uint64_t ns) { return fmt::format("{:.3f}", static_cast<double>(ns) / 1e6); }
std::string pct(double fraction) { return fmt::format("{:.1f}%", 100.0 * fraction); }

std::string shorten(const std::string& name, size_t width) {
  if (name.size() <= width) return name;
  return name.substr(0, width - 3) + "...";
}

}  // namespace

std::string format_report_text(const ProfileReport& r, const std::optional<ProjectionInput>& projection) {
  std::string out;
  out += fmt::format("window: {} ms ({}), {} process{}, {} GPU activities\n", ms(r.window_ns), r.window_source,
                     r.processes, r.processes == 1 ? "" : "es", r.events);
  out += fmt::format("busy:   {} ms ({} of the window)   idle: {} ms ({})\n", ms(r.busy_ns),
                     pct(static_cast<double>(r.busy_ns) / r.window_ns), ms(r.idle_ns),
                     pct(static_cast<double>(r.idle_ns) / r.window_ns));
  out += fmt::format("\n{:<18} {:>12} {:>8} {:>9}  {}\n", "category", "time (ms)", "share", "count", "");
  for (const CategoryTime& c : r.categories) {
    if (c.count == 0) continue;
    out += fmt::format("{:<18} {:>12} {:>8} {:>9}  {}\n", c.category, ms(c.union_ns), pct(c.share), c.count,
                       c.addressable ? "addressable" : "");
  }
  out += fmt::format("\naddressable fraction: {} of the window\n", pct(r.addressable_fraction));
  out += fmt::format("\n{:>10} {:>7} {:>8} {:<16} {}\n", "time (ms)", "share", "count", "category", "kernel");
  for (const KernelTime& k : r.top_kernels) {
    out += fmt::format("{:>10} {:>7} {:>8} {:<16} {}\n", ms(k.total_ns), pct(k.share), k.count, k.category,
                       shorten(k.name, 90));
  }
  if (projection) {
    out += "\nprojection (Amdahl):";
    for (const CategorySpeedup& s : projection->speedups) {
      out += fmt::format(" {}={}x@{}", s.category, s.speedup, s.win_fraction);
    }
    out += fmt::format("\n  end-to-end time saved {}, speedup {:.4f}x\n", pct(projection->result.time_saved_fraction),
                       projection->result.end_to_end_speedup);
  }
  for (const std::string& w : r.warnings) out += "warning: " + w + "\n";
  return out;
}

std::string format_report_json(const ProfileReport& r, const std::optional<ProjectionInput>& projection,
                               const std::string& command) {
  nlohmann::json j;
  j["command"] = command;
  j["window_source"] = r.window_source;
  j["window_ns"] = r.window_ns;
  j["busy_ns"] = r.busy_ns;
  j["idle_ns"] = r.idle_ns;
  j["addressable_fraction"] = r.addressable_fraction;
  j["processes"] = r.processes;
  j["events"] = r.events;
  j["dropped_records"] = r.dropped_records;
  j["warnings"] = r.warnings;
  for (const CategoryTime& c : r.categories) {
    j["categories"].push_back({{"category", c.category},
                               {"addressable", c.addressable},
                               {"union_ns", c.union_ns},
                               {"summed_ns", c.summed_ns},
                               {"count", c.count},
                               {"share", c.share}});
  }
  j["top_kernels"] = nlohmann::json::array();
  for (const KernelTime& k : r.top_kernels) {
    j["top_kernels"].push_back({{"name", k.name},
                                {"category", k.category},
                                {"count", k.count},
                                {"total_ns", k.total_ns},
                                {"median_ns", k.median_ns},
                                {"share", k.share}});
  }
  if (projection) {
    nlohmann::json p;
    for (const CategorySpeedup& s : projection->speedups) {
      p["speedups"].push_back({{"category", s.category}, {"speedup", s.speedup}, {"win_fraction", s.win_fraction}});
    }
    p["time_saved_fraction"] = projection->result.time_saved_fraction;
    p["end_to_end_speedup"] = projection->result.end_to_end_speedup;
    j["projection"] = p;
  }
  return j.dump(2) + "\n";
}

std::string format_report_html(const ProfileReport& r, const std::optional<ProjectionInput>& projection,
                               const std::string& command) {
  std::string rows;
  for (const CategoryTime& c : r.categories) {
    if (c.count == 0) continue;
    rows += fmt::format(
        "<tr><td>{}</td><td>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td>"
        "<td><div class=bar style=\"width:{:.1f}%;background:{}\"></div></td></tr>\n",
        c.category, c.addressable ? "addressable" : "fixed", ms(c.union_ns), pct(c.share), c.count, 100 * c.share,
        c.addressable ? "#2a9d8f" : "#8d99ae");
  }
  std::string kernels;
  for (const KernelTime& k : r.top_kernels) {
    kernels += fmt::format("<tr><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td><td>{}</td><td>{}</td></tr>\n",
                           ms(k.total_ns), pct(k.share), k.count, k.category, html_escape(shorten(k.name, 140)));
  }
  std::string projection_html;
  if (projection) {
    projection_html = fmt::format("<h2>Projection</h2><p>End-to-end time saved <b>{}</b> (speedup {:.4f}x) from",
                                  pct(projection->result.time_saved_fraction), projection->result.end_to_end_speedup);
    for (const CategorySpeedup& s : projection->speedups) {
      projection_html += fmt::format(" {} {}x on {} of its time;", s.category, s.speedup, pct(s.win_fraction));
    }
    projection_html += "</p>";
  }
  std::string warnings;
  for (const std::string& w : r.warnings) warnings += "<p class=warn>warning: " + html_escape(w) + "</p>";
  return fmt::format(R"(<!doctype html>
<html><head><meta charset="utf-8"><title>dragon profile</title>
<style>
body{{font:14px system-ui,sans-serif;margin:2em;max-width:1100px}} td,th{{padding:3px 8px;text-align:left}}
.n{{text-align:right;font-variant-numeric:tabular-nums}} .bar{{height:12px}} table{{border-collapse:collapse}}
tr:nth-child(even){{background:#f4f4f4}} .big{{font-size:28px;font-weight:600}} .warn{{color:#b00}}
</style></head><body>
<h1>dragon profile</h1>
<p><code>{}</code></p>
<p class=big>addressable fraction {}</p>
<p>window {} ms ({}); busy {} ms, idle {} ms; {} processes, {} GPU activities</p>
{}
<h2>Time by category</h2>
<table><tr><th>category</th><th></th><th>ms</th><th>share</th><th>count</th><th style="width:40%"></th></tr>
{}</table>
{}
<h2>Top kernels</h2>
<table><tr><th>ms</th><th>share</th><th>count</th><th>category</th><th>kernel</th></tr>
{}</table>
</body></html>
)",
                     html_escape(command), pct(r.addressable_fraction), ms(r.window_ns), html_escape(r.window_source),
                     ms(r.busy_ns), ms(r.idle_ns), r.processes, r.events, warnings, rows, projection_html, kernels);
}

}  // namespace dragon::profile
