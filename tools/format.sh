#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Formats the C++ sources with clang-format (the style is .clang-format), or
# with --check lists the files that are not formatted and exits 1.
#   tools/format.sh           # rewrite in place
#   tools/format.sh --check   # what CI runs (.ci/run)
# The layering test's fixture tree is left alone: its expected output names
# line numbers (test/layering/).  CLANG_FORMAT picks the binary (default:
# clang-format-14, Debian 12's, which CI installs; its output is what the
# check compares with).
set -euo pipefail
cd "$(dirname "$0")/.."
clang_format=${CLANG_FORMAT:-clang-format-14}
if ! command -v "$clang_format" >/dev/null; then
  echo "tools/format.sh: $clang_format not found (Debian: apt-get install clang-format-14)" >&2
  exit 2
fi
mapfile -t files < <(git ls-files '*.cc' '*.h' '*.c' '*.cpp' | grep -v '^test/layering/fixture/')
case "${1:-}" in
  --check)
    if ! "$clang_format" --dry-run --Werror "${files[@]}" 2>/tmp/format-check.$$; then
      grep -o '^[^:]*:[0-9]*' /tmp/format-check.$$ | cut -d: -f1 | sort -u | sed 's/^/not formatted: /' >&2
      echo "run tools/format.sh to format them" >&2
      rm -f /tmp/format-check.$$
      exit 1
    fi
    rm -f /tmp/format-check.$$
    echo "tools/format.sh: ${#files[@]} files formatted"
    ;;
  "") "$clang_format" -i "${files[@]}" ;;
  *) echo "usage: tools/format.sh [--check]" >&2; exit 2 ;;
esac
