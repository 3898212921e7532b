#!/bin/sh
# `report` writes one self-contained HTML file: check its structure (charts,
# one bar and whisker per configuration, one dot per run, escaped YAML, no
# scripts or external resources), then render it in headless chromium and
# check the screenshot is a real picture (much bigger than a blank page's).
set -u
: "${TOPOADVISOR:?}" "${TA_BUILD:?}"
fixture_bin="$TA_BUILD/tests/test-rank"
[ -x "$fixture_bin" ] || { echo "skip: $fixture_bin not built (make units)"; exit 77; }

tmp=$(mktemp -d /tmp/ta-report-html.XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM
fail() { echo "FAIL: $*"; exit 1; }
db="$tmp/f.db"
"$fixture_bin" --write-fixture clear-winner "$db" >/dev/null || fail "fixture"
"$fixture_bin" --write-fixture redis-seeds "$db" >/dev/null || fail "fixture"
html="$tmp/report.html"
"$TOPOADVISOR" --db "$db" -q report clear-winner -o "$html" || fail "report exited $?"
[ -s "$html" ] || fail "no report written"
[ -z "$(find "$html" -perm -o+w)" ] || fail "report is world-writable"

count() { grep -o "$1" "$html" | wc -l; }
[ "$(count "<table id='ranking'")" -eq 1 ] || fail "ranking table"
[ "$(count "<svg id='chart-bars'")" -eq 1 ] || fail "bar chart"
[ "$(count "<rect class='bar'")" -eq 3 ] || fail "one bar per configuration"
[ "$(count "<line class='whisker'")" -eq 9 ] || fail "CI whiskers (3 lines x 3 configurations)"
[ "$(count "<circle class='run")" -eq 15 ] || fail "one dot per run"
[ "$(count "<svg id='chart-scatter'")" -eq 1 ] || fail "scatter"
[ "$(count "<circle class='point'")" -eq 15 ] || fail "one scatter point per run"
grep -q "<section id='recommendation'>" "$html" || fail "recommendation"
grep -q "verdict: <b>better</b>" "$html" || fail "no verdict in the recommendation"
grep -q "<td><span class='v-better'>better</span></td>" "$html" || fail "no verdict column"
grep -q "<g id='legend'>" "$html" || fail "no legend for the bar colours"
# The bar axis starts at 0: its first tick is at the left edge of the bars.
first_tick=$(grep -o "<text x='[0-9.]*' y='[0-9.]*' text-anchor='middle'>[-0-9.e+]*</text>" "$html" | head -n 1 |
	sed "s/.*>\([-0-9.e+]*\)<.*/\1/")
[ "$first_tick" = 0 ] || fail "bar axis starts at $first_tick, not 0"
# Every scatter point inside the plot area (x 90..820, y 20..380 in report-html.c).
outside=$(grep -o "<circle class='point' cx='[0-9.-]*' cy='[0-9.-]*'" "$html" |
	sed "s/.*cx='\([0-9.-]*\)' cy='\([0-9.-]*\)'/\1 \2/" |
	awk '$1 < 90 || $1 > 820 || $2 < 20 || $2 > 380' | wc -l)
[ "$outside" -eq 0 ] || fail "$outside scatter points outside the plot"
grep -q '&lt;b&gt;not bold&lt;/b&gt; &amp; escaped' "$html" || fail "YAML not HTML-escaped"
grep -q '<b>not bold</b>' "$html" && fail "raw YAML markup in the report"
grep -Eqi '<script|src=|href=|@import|url\(' "$html" && fail "external resource or script"

# Environment levels: one table per level, the decisions over them; a host
# reference row labelled as such.
"$fixture_bin" --write-fixture environment "$db" >/dev/null || fail "fixture"
"$fixture_bin" --write-fixture host-reference "$db" >/dev/null || fail "fixture"
"$TOPOADVISOR" --db "$db" -q report environment -o "$tmp/env.html" || fail "environment report"
grep -q '<h3>Environment noise=none</h3>' "$tmp/env.html" || fail "no table for noise=none"
grep -q '<h3>Environment noise=spin</h3>' "$tmp/env.html" || fail "no table for noise=spin"
grep -q "<table id='decisions'>" "$tmp/env.html" || fail "no decisions table"
grep -q "verdict: <b>better</b>" "$tmp/env.html" || fail "environment verdict"
"$TOPOADVISOR" --db "$db" -q report host-reference -o "$tmp/host.html" || fail "host report"
grep -q "<tr class='hostref'>" "$tmp/host.html" || fail "host reference row not marked"
grep -q "host reference (not a VM shape)" "$tmp/host.html" || fail "host reference not labelled"

# The seeds' report: 2 configurations x 5 runs, gang exits on the x axis.
"$TOPOADVISOR" --db "$db" -q report redis-seeds -o "$tmp/seeds.html" || fail "seeds report"
grep -q 'gang_exits_per_s against' "$tmp/seeds.html" || fail "scatter not of ganged exits"
grep -q 'redis.GET +80' "$tmp/seeds.html" || fail "GET gain in the recommendation"

chromium=$(command -v chromium || command -v chromium-browser || true)
[ -n "$chromium" ] || { echo "skip: chromium not installed (scripts/deps.sh installs it); HTML checks passed"; exit 77; }
shot() { # HTML PNG
	profile=$(mktemp -d "$tmp/profile.XXXXXX")
	timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --disable-quic \
		--no-first-run --disable-background-networking --disable-component-update \
		--disable-sync --user-data-dir="$profile" --screenshot="$2" \
		--window-size=1200,1600 "file://$1" >"$tmp/chromium.log" 2>&1
}
shot "$html" "$tmp/report.png"
[ -s "$tmp/report.png" ] || { cat "$tmp/chromium.log"; fail "no screenshot"; }
printf '<!DOCTYPE html><html><body></body></html>' >"$tmp/blank.html"
shot "$tmp/blank.html" "$tmp/blank.png"
# PNG signature and the 1200 x 1600 size from the IHDR chunk.
[ "$(od -An -tx1 -N8 "$tmp/report.png" | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "not a PNG"
[ "$(od -An -tu1 -j16 -N8 "$tmp/report.png" | tr -s ' ' | sed 's/^ //;s/ $//')" = "0 0 4 176 0 0 6 64" ] ||
	fail "screenshot is not 1200x1600"
report_size=$(wc -c <"$tmp/report.png")
blank_size=$(wc -c <"$tmp/blank.png")
echo "screenshot: $report_size bytes, blank page: $blank_size bytes"
[ "$report_size" -gt $((blank_size * 5)) ] || fail "screenshot looks empty"
[ -n "${TA_KEEP_SCREENSHOT:-}" ] && cp "$tmp/report.png" "$TA_KEEP_SCREENSHOT"
echo "ok"
