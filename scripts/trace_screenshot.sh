#!/usr/bin/env bash
# The picture in docs/observability.md, made from a real trace: runs examples/jbb traced
# (RT_TRACE) with its stats file (RT_STATS) on the virtual 8-node Opteron for 0.15 s (short
# enough that no ring of 64 Ki events wraps), checks the trace against the counters of the same
# run (one track per worker, nothing dropped, every task ended, task slices, steals and
# hand-offs equal to the counters), then opens it in docs/trace-viewer.html in headless Chromium
# (Debian's chromium, served from 127.0.0.1 only), checks that the page drew the same counts and
# screenshots it.
#   bash scripts/trace_screenshot.sh [OUT.png]     (default docs/images/jbb-trace.png)
# Environment: NUMART_BUILD_DIR (default build/release), NUMART_JOBS, CHROMIUM (default chromium).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${NUMART_BUILD_DIR:-build/release}
out=${1:-docs/images/jbb-trace.png}
jobs=${NUMART_JOBS:-$(nproc)}
chromium=${CHROMIUM:-chromium}

if ! command -v "$chromium" >/dev/null; then
  if [ "$(id -u)" -eq 0 ]; then
    echo "trace_screenshot: installing Debian's chromium"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq chromium >/dev/null || { apt-get update -qq && apt-get install -y -qq chromium >/dev/null; }
  else
    echo "trace_screenshot: '$chromium' not found; install Debian's chromium (sudo apt-get install chromium) or set CHROMIUM" >&2
    exit 1
  fi
fi

[ -f "$build/CMakeCache.txt" ] || cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DNUMART_WERROR=ON >/dev/null
cmake --build "$build" -j "$jobs" --target numart_jbb >/dev/null

tmp=$(mktemp -d)
server=""
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
mkdir "$tmp/www" "$tmp/profile"

RT_TRACE="$tmp/www/trace.json" RT_STATS="$tmp/stats.json" "$build/examples/jbb/numart_jbb" --runtime numart \
  --topology xml:tests/data/topologies/64amd64-4p2n4ca2co.xml --workers 16 --placement scatter \
  --warmup 0 --seconds 0.15 >/dev/null 2>&1

# The checks; the counts the page must show go to expected.txt, the window to draw to window.txt.
echo "trace_screenshot: trace against the counters of the same run (trace, counters):"
python3 - "$tmp/www/trace.json" "$tmp/stats.json" "$tmp" <<'EOF'
import json, sys
trace_path, stats_path, tmp = sys.argv[1:4]
try:
    trace = json.load(open(trace_path))
    stats = json.load(open(stats_path))
except (OSError, ValueError) as e:
    sys.exit("trace_screenshot: %s" % e)
meta = trace["otherData"]["numart"]
events = trace["traceEvents"]
workers = [t for t in meta["tracks"] if t["worker"] >= 0]
total = lambda name: sum(w["counters"][name] for w in stats["workers"])
kind = lambda e: e.get("args", {}).get("event") if e.get("ph") == "X" else None
tasks = [e for e in events if kind(e) == "task"]
steals = [e for e in events if kind(e) == "steal"]
wakes = [e for e in events if kind(e) == "mailbox_handoff"]
checks = [
    ("one track per worker", len(workers), len(stats["workers"])),
    ("events dropped", meta["dropped"], 0),
    ("unmatched ends and unparks", sum(t["unmatched"] for t in meta["tracks"]), 0),
    ("tasks left open", sum(1 for e in tasks if e["args"].get("open")), 0),
    ("task slices = tasks_run", len(tasks), total("tasks_run")),
    ("steals = steals", len(steals), total("steals")),
    ("wakes (hand-offs) = mailbox_handoffs", len(wakes), total("mailbox_handoffs")),
]
ok = True
for name, got, want in checks:
    ok = ok and got == want
    print("  %-40s %10d %10d  %s" % (name, got, want, "ok" if got == want else "MISMATCH"))
if not ok:
    sys.exit("trace_screenshot: the trace does not match the counters of its run")
with open(tmp + "/expected.txt", "w") as f:
    f.write("workers=%d tasks=%d steals=%d wakes=%d dropped=%d\n" % (len(workers), len(tasks), len(steals), len(wakes), meta["dropped"]))
# The picture starts 5 ms before the first task: before it the workers only park while jbb
# builds its warehouses.
first_ms = min(e["ts"] for e in tasks) / 1000.0 if tasks else 0.0
with open(tmp + "/window.txt", "w") as f:
    f.write("%d\n" % max(0, int(first_ms) - 5))
EOF

ln -s "$PWD/docs/trace-viewer.html" "$tmp/www/trace-viewer.html"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -m http.server --bind 127.0.0.1 --directory "$tmp/www" "$port" >"$tmp/http.log" 2>&1 &
server=$!
python3 - "$port" <<'EOF' || { cat "$tmp/http.log" >&2; exit 1; }
import sys, time, urllib.request
for _ in range(100):
    try:
        urllib.request.urlopen("http://127.0.0.1:%s/trace-viewer.html" % sys.argv[1], timeout=1).read()
        sys.exit(0)
    except OSError:
        time.sleep(0.1)
sys.exit("trace_screenshot: the local http server did not answer on port %s" % sys.argv[1])
EOF
url="http://127.0.0.1:$port/trace-viewer.html?trace=trace.json&from=$(cat "$tmp/window.txt")"
browse() {
  "$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$tmp/profile" --window-size=1600,900 --virtual-time-budget=30000 "$@" "$url" 2>>"$tmp/chromium.log"
}

# What the page drew: the counts in #summary's data-* attributes must be the trace's.
browse --dump-dom >"$tmp/dom.html" || { tail -5 "$tmp/chromium.log" >&2; exit 1; }
python3 - "$tmp/dom.html" "$tmp/expected.txt" <<'EOF'
import re, sys
dom = open(sys.argv[1]).read()
expected = dict(kv.split("=") for kv in open(sys.argv[2]).read().split())
if 'data-state="drawn"' not in dom:
    err = re.search(r'data-error="([^"]*)"', dom)
    sys.exit("trace_screenshot: the page did not draw the trace: %s" % (err.group(1) if err else "no error shown (still loading?)"))
summary = re.search(r'<div id="summary"([^>]*)>', dom).group(1)
drawn = dict(re.findall(r'data-([a-z]+)="([^"]*)"', summary))
print("trace_screenshot: the page drew (page, trace):")
bad = False
for k, v in expected.items():
    print("  %-40s %10s %10s  %s" % (k, drawn.get(k), v, "ok" if drawn.get(k) == v else "MISMATCH"))
    bad = bad or drawn.get(k) != v
if bad:
    sys.exit("trace_screenshot: the page's counts differ from the trace's")
EOF

mkdir -p "$(dirname "$out")"
abs_out=$(cd "$(dirname "$out")" && pwd)/$(basename "$out")
browse --screenshot="$abs_out" >/dev/null || { tail -5 "$tmp/chromium.log" >&2; exit 1; }
echo "trace_screenshot: $out ($("$chromium" --version 2>/dev/null), from $(cat "$tmp/window.txt") ms to the end)"
