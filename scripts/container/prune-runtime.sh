#!/bin/sh
# Removes from an installed node_modules what no program reads at run time, for the runtime image:
# source maps, TypeScript sources and declarations, markdown, the dependencies' own test suites,
# and the C/C++ sources and build trees of native addons (their compiled .node files stay).
# tracepipe's own package (node_modules/tracepipe) is left whole: its example graphs are
# TypeScript that the agent server loads, and its declarations are its published API. The agent
# server reads the types of `Annotation` graphs with the TypeScript compiler, which needs the
# declarations of TypeScript's standard library, of @langchain/* and of the packages theirs name
# (zod, langsmith, @standard-schema): those stay (~10 MB).
#
# Measured on the production install of package-lock.json (226 MB): maps 46 MB, declarations
# 39 MB, TypeScript sources 10 MB, markdown 5 MB, addon sources ~12 MB, test suites ~3 MB.
# `find` rather than a pruning package: the rules are these few lines, each one checked by
# test/container.test.ts (the image still serves the proxy and the agent server).
#
#   scripts/container/prune-runtime.sh /app/node_modules
set -eu
modules=${1:?usage: prune-runtime.sh <node_modules>}
cd "$modules"

# Everything below skips tracepipe's own package.
find . -path ./tracepipe -prune -o -type f \( \
  -name '*.map' \
  -o \( \( -name '*.ts' -o -name '*.mts' -o -name '*.cts' \) ! -name '*.d.ts' ! -name '*.d.mts' ! -name '*.d.cts' \) \
  -o -name '*.md' -o -name '*.markdown' \
  -o -name '*.test.js' -o -name '*.test.cjs' -o -name '*.test.mjs' \
  -o -name '*.spec.js' -o -name '*.spec.cjs' -o -name '*.spec.mjs' \
  -o -name '*.c' -o -name '*.cc' -o -name '*.cpp' -o -name '*.h' -o -name '*.hpp' \
  -o -name '*.gyp' -o -name '*.gypi' -o -name '*.o' -o -name '*.a' -o -name '*.mk' -o -name Makefile \
  \) -print0 | xargs -0r rm -f

# Declarations, but those the graph type reader needs.
find . -path ./tracepipe -prune -o -type f \( -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' \) \
  ! -path './typescript/lib/*' ! -path './@langchain/*' ! -path './zod/*' ! -path './langsmith/*' \
  ! -path './@standard-schema/*' -print0 | xargs -0r rm -f

# A package's own test suite: a test/, tests/ or __tests__/ folder beside its package.json.
find . -path ./tracepipe -prune -o -type d \( -name test -o -name tests -o -name __tests__ \) -print |
  while read -r dir; do
    if [ -f "$dir/../package.json" ]; then rm -rf "$dir"; fi
  done

# Folders left empty (addon source trees, declaration-only folders).
find . -path ./tracepipe -prune -o -type d -empty -print0 | xargs -0r rmdir -p --ignore-fail-on-non-empty 2>/dev/null || true
