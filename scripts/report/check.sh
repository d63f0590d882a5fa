#!/usr/bin/env bash
# Checks that a Markdown report renders: every image it references (![alt](file)) exists next to
# it and is a PNG (the 8-byte PNG signature, 89 50 4E 47 0D 0A 1A 0A), and at least one image
# is referenced. Prints one line per problem; exit 0 when all is well, 1 otherwise, 2 for bad use.
#   scripts/report/check.sh OUTDIR/report.md
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: $0 REPORT.md" >&2
  exit 2
fi
report=$1
if [ ! -f "$report" ]; then
  echo "check: $report: no such file" >&2
  exit 1
fi
dir=$(dirname "$report")
signature='89504e470d0a1a0a'
checked=0
bad=0
while IFS= read -r ref; do
  checked=$((checked + 1))
  case "$ref" in
    /* | *://*) echo "check: $report references '$ref': images must be files next to the report" >&2; bad=$((bad + 1)); continue ;;
  esac
  file="$dir/$ref"
  if [ ! -f "$file" ]; then
    echo "check: $report references '$ref', which does not exist" >&2
    bad=$((bad + 1))
  elif [ "$(head -c 8 "$file" | od -An -tx1 | tr -d ' \n')" != "$signature" ]; then
    echo "check: '$ref' is not a PNG file (no PNG signature)" >&2
    bad=$((bad + 1))
  fi
done < <(grep -o '!\[[^]]*\]([^)]*)' "$report" | sed 's/^!\[[^]]*\](\(.*\))$/\1/')
if [ "$checked" -eq 0 ]; then
  echo "check: $report references no image" >&2
  exit 1
fi
if [ "$bad" -ne 0 ]; then
  echo "check: $bad of $checked images referenced by $report are missing or not PNG" >&2
  exit 1
fi
echo "check: $checked images referenced by $report exist and are PNG"
