#include "dragon/bench/html_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "dragon/support/html.h"

namespace dragon::bench {
namespace {

std::string escape(const std::string& text) { return html_escape(text); }

std::string ms(const Contender* c) {
  if (!c || !c->time) return "";
  return fmt::format("{:.4g}", c->time->median_ms);
}

// A table cell whose sort key is a number (empty cells sort last), with a tooltip if given.
std::string number_cell(std::optional<double> value, const std::string& shown, const std::string& title = "") {
  std::string key = value && std::isfinite(*value) ? fmt::format("{:.9g}", *value) : "";
  std::string tooltip = title.empty() ? "" : fmt::format(" title=\"{}\"", escape(title));
  return fmt::format("<td class=\"num\" data-v=\"{}\"{}>{}</td>", key, tooltip, escape(shown));
}

std::optional<double> median(const Contender* c) {
  if (!c || !c->time || c->status != "ok") return std::nullopt;
  return c->time->median_ms;
}

double peak_flops(const SuiteRun& run, const ProblemResult& p) {
  if (!run.peaks) return 0;
  bool sixteen = p.spec.find("f16") != std::string::npos;  // bf16 and f16 specs
  return sixteen ? std::max(run.peaks->f16_flops_per_s, run.peaks->bf16_flops_per_s) : run.peaks->f32_flops_per_s;
}

std::string speedup_plot(const SuiteRun& run) {
  struct Bar {
    std::string label;
    double speedup;
  };
  std::vector<Bar> bars;
  for (const ProblemResult& p : run.problems) {
    if (const Contender* torch = find_baseline(p, "torch"); torch) {
      if (std::optional<double> s = p.speedup_over(*torch); s) bars.push_back({p.id, *s});
    }
  }
  if (bars.empty()) return "<p>No problem has both our kernel and the eager baseline correct and timed.</p>";
  const double width = 960, height = 320, left = 50, bottom = 40, top = 10;
  double lo = 1, hi = 1;
  for (const Bar& b : bars) {
    lo = std::min(lo, b.speedup);
    hi = std::max(hi, b.speedup);
  }
  double log_lo = std::floor(std::log10(lo)), log_hi = std::ceil(std::log10(hi));
  if (log_hi <= log_lo) log_hi = log_lo + 1;
  auto y = [&](double v) { return top + (log_hi - std::log10(v)) / (log_hi - log_lo) * (height - top - bottom); };
  double step = (width - left - 10) / static_cast<double>(bars.size());
  std::string svg = fmt::format("<svg viewBox=\"0 0 {} {}\" class=\"plot\" role=\"img\" aria-label=\"speedup per problem\">",
                                width, height);
  for (double e = log_lo; e <= log_hi; e += 1) {
    double v = std::pow(10, e);
    svg += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\" class=\"grid\"/>", left, width - 10, y(v), y(v));
    svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\" class=\"axis\" text-anchor=\"end\">{}x</text>", left - 4, y(v) + 4,
                       fmt::format("{:g}", v));
  }
  for (size_t i = 0; i < bars.size(); ++i) {
    double x = left + i * step, y1 = y(1), yv = y(bars[i].speedup);
    svg += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" class=\"{}\"><title>{}: {:.3g}x</title></rect>",
        x + step * 0.1, std::min(y1, yv), step * 0.8, std::max(std::abs(y1 - yv), 0.5),
        bars[i].speedup >= 1 ? "faster" : "slower", escape(bars[i].label), bars[i].speedup);
    if (bars.size() <= 60 || i % 2 == 0) {
      svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" class=\"tick\" text-anchor=\"middle\">{}</text>", x + step / 2,
                         height - bottom + 14, escape(bars[i].label));
    }
  }
  svg += fmt::format("<text x=\"{}\" y=\"{}\" class=\"axis\" text-anchor=\"middle\">problem (eager time / ours; above 1x we are faster)</text>",
                     (width + left) / 2, height - 6);
  return svg + "</svg>";
}

std::string roofline_plot(const SuiteRun& run) {
  if (!run.peaks || run.peaks->copy_bytes_per_s <= 0) return "<p>No measured peaks in this run (pass --peaks FILE).</p>";
  struct Point {
    std::string label;
    double intensity, flops_per_s;
    bool ours;
  };
  std::vector<Point> points;
  for (const ProblemResult& p : run.problems) {
    if (p.flops <= 0 || p.bytes <= 0) continue;
    if (std::optional<double> m = median(&p.ours); m) points.push_back({p.id, p.flops / p.bytes, p.flops / (*m * 1e-3), true});
    if (std::optional<double> m = median(find_baseline(p, "torch")); m) {
      points.push_back({p.id, p.flops / p.bytes, p.flops / (*m * 1e-3), false});
    }
  }
  if (points.empty()) return "<p>No timed problem with arithmetic to place under the roofline.</p>";
  const double width = 960, height = 420, left = 96, bottom = 40, top = 10, right = 10;
  double peak = std::max({run.peaks->f32_flops_per_s, run.peaks->f16_flops_per_s, run.peaks->bf16_flops_per_s});
  // One decade of margin around the points; the roofs' ridges stay inside.
  double x_lo = INFINITY, x_hi = 0, y_lo = INFINITY;
  for (const Point& p : points) {
    x_lo = std::min(x_lo, p.intensity);
    x_hi = std::max(x_hi, p.intensity);
    y_lo = std::min(y_lo, p.flops_per_s);
  }
  x_lo = std::min(x_lo / 10, 1.0);
  x_hi = std::max(x_hi * 10, peak / run.peaks->copy_bytes_per_s * 10);
  y_lo /= 10;
  double y_hi = std::pow(10, std::ceil(std::log10(peak)));
  double lx0 = std::floor(std::log10(x_lo)), lx1 = std::ceil(std::log10(x_hi));
  double ly0 = std::floor(std::log10(y_lo)), ly1 = std::log10(y_hi);
  auto X = [&](double v) { return left + (std::log10(v) - lx0) / (lx1 - lx0) * (width - left - right); };
  auto Y = [&](double v) { return top + (ly1 - std::log10(v)) / (ly1 - ly0) * (height - top - bottom); };
  std::string svg = fmt::format("<svg viewBox=\"0 0 {} {}\" class=\"plot\" role=\"img\" aria-label=\"roofline\">", width, height);
  for (double e = lx0; e <= lx1; e += 1) {
    svg += fmt::format("<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\" class=\"grid\"/><text x=\"{0:.1f}\" y=\"{3}\" class=\"axis\" text-anchor=\"middle\">{4:g}</text>",
                       X(std::pow(10, e)), top, height - bottom, height - bottom + 14, std::pow(10, e));
  }
  for (double e = ly0; e <= ly1; e += 1) {
    svg += fmt::format("<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" class=\"grid\"/><text x=\"{3}\" y=\"{4:.1f}\" class=\"axis\" text-anchor=\"end\">{5:g} TFLOP/s</text>",
                       left, width - right, Y(std::pow(10, e)), left - 4, Y(std::pow(10, e)) + 4, std::pow(10, e) / 1e12);
  }
  // Roofs: bandwidth x intensity up to each compute peak.
  for (auto [rate, name] : {std::pair{run.peaks->f32_flops_per_s, "f32"},
                            std::pair{std::max(run.peaks->f16_flops_per_s, run.peaks->bf16_flops_per_s), "16-bit tensor"}}) {
    if (rate <= 0) continue;
    double ridge = rate / run.peaks->copy_bytes_per_s;
    double x_start = std::pow(10, lx0);
    svg += fmt::format("<polyline class=\"roof\" points=\"{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}\"/>", X(x_start),
                       Y(std::max(x_start * run.peaks->copy_bytes_per_s, std::pow(10, ly0))), X(ridge), Y(rate),
                       X(std::pow(10, lx1)), Y(rate));
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" class=\"axis\">{} peak {:.0f} TFLOP/s</text>", X(ridge) + 4,
                       Y(rate) - 4, name, rate / 1e12);
  }
  for (const Point& p : points) {
    svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" class=\"{}\"><title>{} ({}): {:.3g} TFLOP/s at {:.3g} flop/byte</title></circle>",
                       X(p.intensity), Y(p.flops_per_s), p.ours ? "ours" : "torch", escape(p.label),
                       p.ours ? "ours" : "torch eager", p.flops_per_s / 1e12, p.intensity);
  }
  svg += fmt::format("<text x=\"{}\" y=\"{}\" class=\"axis\" text-anchor=\"middle\">arithmetic intensity (flop per byte of compulsory traffic); blue: ours, orange: torch eager</text>",
                     (width + left) / 2, height - 6);
  return svg + "</svg>";
}

constexpr const char* kStyle = R"(body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}
h1{font-size:20px}h2{font-size:16px;margin-top:28px}table{border-collapse:collapse}
td,th{border-bottom:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}
th{cursor:pointer;background:#f4f4f4;position:sticky;top:0}td.num{text-align:right;font-variant-numeric:tabular-nums}
.ok{color:#17702e}.bad{color:#b00020}.muted{color:#777}.meta td{border:none;padding:1px 8px}
.plot{width:100%;max-width:960px;border:1px solid #eee}.grid{stroke:#eee}.axis,.tick{font-size:11px;fill:#555}
.faster{fill:#2e8b57}.slower{fill:#c0504d}.roof{fill:none;stroke:#333;stroke-width:1.5}
circle.ours{fill:#1f77b4;opacity:.8}circle.torch{fill:#ff7f0e;opacity:.8}td.err{max-width:420px;font-size:12px;color:#555})";

constexpr const char* kSortScript = R"(document.querySelectorAll('table.sortable th').forEach((th,i)=>{
th.addEventListener('click',()=>{const t=th.closest('table'),b=t.tBodies[0],rows=[...b.rows];
const asc=th.dataset.dir!=='asc';th.dataset.dir=asc?'asc':'desc';
const key=r=>{const c=r.cells[i];return c.dataset.v!==undefined?(c.dataset.v===''?null:parseFloat(c.dataset.v)):c.textContent};
rows.sort((x,y)=>{const a=key(x),c=key(y);if(a===null)return 1;if(c===null)return -1;
const r=typeof a==='number'?a-c:String(a).localeCompare(String(c),undefined,{numeric:true});return asc?r:-r});
rows.forEach(r=>b.appendChild(r));});});)";

}  // namespace

const Contender* find_baseline(const ProblemResult& problem, const std::string& prefix) {
  for (const Contender& b : problem.baselines) {
    std::string lower = b.name;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    if (lower.rfind(prefix, 0) == 0) return &b;
  }
  return nullptr;
}

std::optional<double> geomean_speedup(const SuiteRun& run, const std::string& baseline_prefix, int* count) {
  double log_sum = 0;
  int n = 0;
  for (const ProblemResult& p : run.problems) {
    const Contender* b = find_baseline(p, baseline_prefix);
    if (!b) continue;
    if (std::optional<double> s = p.speedup_over(*b); s) {
      log_sum += std::log(*s);
      ++n;
    }
  }
  if (count) *count = n;
  if (n == 0) return std::nullopt;
  return std::exp(log_sum / n);
}

std::string render_html_report(const SuiteRun& run) {
  std::map<std::string, int> statuses;
  for (const ProblemResult& p : run.problems) ++statuses[p.status];
  std::string html = "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">";
  html += fmt::format("<title>Little Dragon: {} on {}</title><style>{}</style></head><body>", escape(run.suite),
                      escape(run.device), kStyle);
  html += fmt::format("<h1>Little Dragon: {} on {}</h1>", escape(run.suite), escape(run.device));
  html += "<table class=\"meta\">";
  auto meta = [&](const std::string& key, const std::string& value) {
    html += fmt::format("<tr><td class=\"muted\">{}</td><td>{}</td></tr>", escape(key), escape(value));
  };
  meta("command", run.command);
  meta("commit", run.commit);
  meta("started", run.started_at);
  meta("GPU", run.gpu.describe());
  meta("eager baselines", run.eager_library);
  if (run.peaks) {
    meta("measured peaks", fmt::format("copy {:.2f} TB/s, f32 {:.1f} TFLOP/s, f16 {:.0f} TFLOP/s, bf16 {:.0f} TFLOP/s",
                                       run.peaks->copy_bytes_per_s / 1e12, run.peaks->f32_flops_per_s / 1e12,
                                       run.peaks->f16_flops_per_s / 1e12, run.peaks->bf16_flops_per_s / 1e12));
  }
  html += "</table><h2>Summary</h2><p>";
  std::string counts;
  for (const auto& [status, n] : statuses) counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", n, status);
  html += fmt::format("{} problems: {}.", run.problems.size(), escape(counts));
  for (auto [prefix, label] :
       {std::pair{"torch", "libtorch eager"}, std::pair{"cublas", "cuBLAS"}, std::pair{"cudnn", "cuDNN"}}) {
    int n = 0;
    if (std::optional<double> g = geomean_speedup(run, prefix, &n); g) {
      html += fmt::format(" Geometric mean speedup over {}: <b>{:.3g}x</b> on the {} problems where both are correct and timed.",
                          label, *g, n);
    }
  }
  html += "</p><h2>Speedup over libtorch eager, per problem</h2>" + speedup_plot(run);
  html += "<h2>Roofline (measured peaks)</h2>" + roofline_plot(run);
  html += "<h2>Problems</h2><p class=\"muted\">Click a column to sort. Times are medians in ms from the harness's GPU "
          "timer (L2 flushed, CI stopping rule); rates are compulsory bytes and flops over our median.</p>";
  html += "<table class=\"sortable\"><thead><tr><th>id</th><th>problem</th><th>ours</th><th>ours ms</th><th>eager ms</th>"
          "<th>cuBLAS / cuDNN ms</th><th>speedup vs eager</th><th>speedup vs cuBLAS / cuDNN</th><th>TB/s</th>"
          "<th>TFLOP/s</th>"
          "<th>% of peak</th><th>floor ms</th><th>error / tolerance</th><th>note</th></tr></thead><tbody>";
  for (const ProblemResult& p : run.problems) {
    const Contender* torch = find_baseline(p, "torch");
    // The vendor library's baseline: a problem is matmul-like (cuBLAS) or a convolution,
    // pooling or softmax (cuDNN), never both.
    const Contender* vendor = find_baseline(p, "cublas");
    if (!vendor) vendor = find_baseline(p, "cudnn");
    std::optional<double> ours_ms = median(&p.ours);
    std::optional<double> tbps, tflops, fraction;
    if (ours_ms) {
      tbps = p.bytes / (*ours_ms * 1e-3) / 1e12;
      tflops = p.flops / (*ours_ms * 1e-3) / 1e12;
      if (run.peaks) {
        double peak = p.compute_bound ? peak_flops(run, p) : run.peaks->copy_bytes_per_s;
        double achieved = p.compute_bound ? *tflops * 1e12 : *tbps * 1e12;
        if (peak > 0) fraction = 100 * achieved / peak;
      }
    }
    std::optional<double> vs_torch = torch ? p.speedup_over(*torch) : std::nullopt;
    std::optional<double> vs_vendor = vendor ? p.speedup_over(*vendor) : std::nullopt;
    double worst = 0;
    for (const OutputCheck& c : p.ours.checks) worst = std::max(worst, c.tolerance > 0 ? c.normalized_error / c.tolerance : (c.ok ? 0 : INFINITY));
    std::string note = p.message;
    if (torch && torch->status != "ok") note += (note.empty() ? "" : "; ") + std::string("eager: ") + torch->error;
    if (vendor && vendor->status != "ok") {
      note += (note.empty() ? "" : "; ") + vendor->name + ": " + vendor->status + (vendor->error.empty() ? "" : " " + vendor->error);
    }
    html += fmt::format("<tr><td data-v=\"{}\">{}</td><td title=\"{}\">{}</td><td class=\"{}\">{}</td>", 
                        std::isdigit(static_cast<unsigned char>(p.id[0])) ? p.id : "", escape(p.id), escape(p.spec),
                        escape(p.name), p.status == "ok" ? "ok" : "bad", escape(p.status));
    html += number_cell(ours_ms, ms(&p.ours)) + number_cell(median(torch), ms(torch));
    html += number_cell(median(vendor), ms(vendor), vendor ? vendor->name : "");  // the call and math mode
    html += number_cell(vs_torch, vs_torch ? fmt::format("{:.3g}x", *vs_torch) : "");
    html += number_cell(vs_vendor, vs_vendor ? fmt::format("{:.3g}x", *vs_vendor) : "");
    html += number_cell(tbps, tbps ? fmt::format("{:.3g}", *tbps) : "");
    html += number_cell(tflops, tflops && p.flops > 0 ? fmt::format("{:.3g}", *tflops) : "");
    html += number_cell(fraction, fraction ? fmt::format("{:.1f}%", *fraction) : "");
    html += number_cell(p.floor_ms > 0 ? std::optional<double>(p.floor_ms) : std::nullopt,
                        p.floor_ms > 0 ? fmt::format("{:.3g}", p.floor_ms) : "");
    html += number_cell(p.ours.checks.empty() ? std::nullopt : std::optional<double>(worst),
                        p.ours.checks.empty() ? "" : fmt::format("{:.2g}", worst));
    html += fmt::format("<td class=\"err\">{}</td></tr>", escape(note));
  }
  html += "</tbody></table><script>";
  html += kSortScript;
  html += "</script></body></html>\n";
  return html;
}

}  // namespace dragon::bench
