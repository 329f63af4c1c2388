#!/usr/bin/env bash
# Opens an HTML report of dragon bench in headless Chromium, checks that it rendered (the
# page's DOM has the results table and both plots), and writes a PNG screenshot.
# Usage: scripts/report-screenshot.sh REPORT.html SCREENSHOT.png [WIDTHxHEIGHT]
# Needs chromium (scripts/setup.sh --with-chromium).
set -euo pipefail
report=${1:?usage: scripts/report-screenshot.sh REPORT.html SCREENSHOT.png [WIDTHxHEIGHT]}
png=${2:?usage: scripts/report-screenshot.sh REPORT.html SCREENSHOT.png [WIDTHxHEIGHT]}
size=${3:-1280x2400}
command -v chromium >/dev/null || { echo "chromium is not installed: scripts/setup.sh --with-chromium" >&2; exit 1; }
[ -f "$report" ] || { echo "$report: no such report" >&2; exit 1; }
url="file://$(cd "$(dirname "$report")" && pwd)/$(basename "$report")"
flags=(--headless --no-sandbox --disable-gpu --hide-scrollbars --virtual-time-budget=2000)
dom=$(chromium "${flags[@]}" --dump-dom "$url" 2>/dev/null)
for part in 'class="sortable"' 'aria-label="speedup per problem"' 'aria-label="roofline"'; do
  grep -q "$part" <<<"$dom" || { echo "$report: the rendered page lacks $part" >&2; exit 1; }
done
rows=$(grep -o '<tr>' <<<"$dom" | wc -l)
chromium "${flags[@]}" --window-size="${size/x/,}" --screenshot="$png" "$url" >/dev/null 2>&1
[ -s "$png" ] || { echo "chromium wrote no screenshot" >&2; exit 1; }
echo "rendered $report ($rows table rows) -> $png"
