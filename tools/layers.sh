#!/bin/sh
# The layers of simvm, checked from the sources' #include lines (make test
# runs it). Each folder may include only the folders below it:
#
#   cli/       its own headers, and the public ones: api/simvm.h,
#              api/explore.h, vm/vm.h, base/options.h, base/outfile.h
#   api/       compiler/ lang/ vm/ base/
#   compiler/  lang/ vm/ base/
#   lang/      base/            (the front end knows nothing of the VM)
#   vm/        base/            (nor the VM of the front end)
#   base/      nothing
#
# and inside vm/, a folder a layer (docs/INTERNALS.md):
#
#   vm/ itself    vm.c, vm.h: every folder below
#   vm/interp/    vm/explore/ vm/runtime/ vm/trace/ vm/value/
#   vm/explore/   vm/runtime/ vm/trace/ vm/value/
#   vm/runtime/   vm/trace/ vm/value/
#   vm/trace/     vm/value/
#   vm/value/     base/
#
# except through the interface headers, which any folder of vm/ may
# include, each saying why in its opening comment: vm/vm.h (the public
# one), vm/runtime/state.h (the VM's state, which every function takes),
# vm/runtime/explorer.h (the hooks the VM calls under exploration) and
# vm/interp/builtins.h (the builtin table, which builtin values index).
#
# It fails on any other include (so on vm/ including compiler/, lang/ or
# api/, on a folder of vm/ including one above it, on the CLI including an
# internal header, and on a public header including one, which the CLI
# would then see), and names every folder-level include cycle but those
# through an interface header. Includes resolve as the compiler resolves
# them: beside the including file, then -I$BUILD/gen -Ilang and vm/'s
# folders (the Makefile's VM_INCLUDE) (a generated header counts as the
# folder's it is made from: parser.h lang/'s, sinks.h vm/trace/'s).
#
#   sh tools/layers.sh [BUILD]            the check
#   sh tools/layers.sh --cycles [BUILD]   also list the pairs of vm/ files
#                                         that call each other, from the
#                                         symbols of BUILD/obj, and fail on
#                                         a pair vm/runtime/state.h does
#                                         not explain (a line of its
#                                         opening comment naming both files
#                                         around "<->")
set -u
cd "$(dirname "$0")/.." || exit 2
cycles=false
if [ "${1:-}" = --cycles ]; then cycles=true; shift; fi
build=${1:-build}

sources=$(find base lang vm compiler api cli -type f \( -name '*.[ch]' -o -name '*.y' -o -name '*.re' -o -name '*.def' \) | LC_ALL=C sort)
{
  # every file an include may resolve to
  for f in $sources $(find "$build/gen" -type f 2>/dev/null); do echo "file $f"; done
  # every include: the including file and what it names
  for f in $sources; do
    sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" | while IFS= read -r name; do
      echo "include $f $name"
    done
  done
} | awk -v build="$build" '
function normalize(path,   n, parts, out, i, k) {
  n = split(path, parts, "/"); k = 0
  for (i = 1; i <= n; i++) {
    if (parts[i] == "" || parts[i] == ".") continue
    if (parts[i] == ".." && k > 0 && out[k] != "..") { k--; continue }
    out[++k] = parts[i]
  }
  path = ""
  for (i = 1; i <= k; i++) path = path (i > 1 ? "/" : "") out[i]
  return path
}
# the folder of a file: its top folder, or for vm/ its layer (vm for vm.c, vm.h)
function folder(path,   f, n, parts) {
  if (index(path, build "/gen/") == 1) {
    f = substr(path, length(build "/gen/") + 1)
    return (f in generated) ? generated[f] : "gen"
  }
  n = split(path, parts, "/")
  if (parts[1] == "vm" && n > 2) return "vm/" parts[2]
  return parts[1]
}
function top(f) { sub(/\/.*/, "", f); return f }
function dir(path) { sub(/\/[^\/]*$/, "", path); return path }
BEGIN {
  allowed["cli", "api"] = allowed["cli", "vm"] = allowed["cli", "base"] = 1
  allowed["api", "compiler"] = allowed["api", "lang"] = allowed["api", "vm"] = allowed["api", "base"] = 1
  allowed["compiler", "lang"] = allowed["compiler", "vm"] = allowed["compiler", "base"] = 1
  allowed["lang", "base"] = allowed["vm", "base"] = 1
  # the layers of vm/, from the bottom: each may include those below it
  n_layers = split("vm/value vm/trace vm/runtime vm/explore vm/interp vm", layer, " ")
  for (i = 1; i <= n_layers; i++) {
    allowed[layer[i], "base"] = 1
    for (j = 1; j < i; j++) allowed[layer[i], layer[j]] = 1
  }
  # the headers any folder of vm/ may include, whatever its layer
  interface["vm/vm.h"] = interface["vm/runtime/state.h"] = interface["vm/runtime/explorer.h"] = 1
  interface["vm/interp/builtins.h"] = 1
  public["api/simvm.h"] = public["api/explore.h"] = public["vm/vm.h"] = public["base/options.h"] = public["base/outfile.h"] = 1
  public["vm/value/value.h"] = 1 # the values vm/vm.h hands out
  # generated headers belong to the folder they are made from
  generated["parser.h"] = "lang"; generated["sinks.h"] = "vm/trace"
  n_search = split(build "/gen lang vm vm/value vm/trace vm/runtime vm/explore vm/interp", search, " ")
}
$1 == "file" { exists[$2] = 1; next }
$1 == "include" {
  from = $2; name = $3; target = ""
  candidate = normalize(dir(from) "/" name)
  if (candidate in exists) target = candidate
  for (i = 1; target == "" && i <= n_search; i++) {
    candidate = normalize(search[i] "/" name)
    if (candidate in exists) target = candidate
  }
  if (target == "") { printf "layers: %s includes \"%s\", which is nowhere\n", from, name; bad++; next }
  a = folder(from); b = folder(target)
  if ((from in public) && !(target in public)) {
    printf "layers: %s includes %s: a public header may include only public ones (so the CLI sees no internals)\n", from, target; bad++
  }
  if (a == b) next
  # outside vm/, vm/ is one folder; inside, an interface header is no edge
  if (top(a) != "vm") b = top(b)
  else if (top(b) == "vm" && (target in interface)) next
  if (a == b) next
  edge[a, b] = 1; folders[a] = folders[b] = 1
  if (a == "cli" && !(target in public)) {
    printf "layers: %s includes %s: the CLI may include only the public headers (api/simvm.h, api/explore.h, vm/vm.h, base/options.h, base/outfile.h)\n", from, target; bad++
  } else if (!((a, b) in allowed)) {
    printf "layers: %s includes %s: %s/ may not include %s/ (a layer calls only down)\n", from, target, a, b; bad++
  }
}
# a depth-first search that prints each cycle it closes
function visit(f, path,   g) {
  state[f] = 1
  for (g in folders) {
    if (!((f, g) in edge)) continue
    if (state[g] == 1) { printf "layers: folder-level include cycle: %s%s -> %s\n", substr(path, index(path, " " g " ") + 1), f, g; bad++ }
    else if (!state[g]) visit(g, path f " -> ")
  }
  state[f] = 2
}
END {
  for (f in folders) if (!state[f]) visit(f, " ")
  if (bad) { printf "layers: %d problem%s\n", bad, bad == 1 ? "" : "s"; exit 1 }
  print "layers: ok (cli -> api -> compiler -> lang, vm -> base; vm -> interp -> explore -> runtime -> trace -> value)"
}' || exit 1

$cycles || exit 0
# vm/ files that call each other: defined and undefined symbols per object
objects=$(ls "$build"/obj/vm/*.o "$build"/obj/vm/*/*.o 2>/dev/null | grep -v -e '\.switch\.o$' -e '/interp_profiled\.o$')
[ -n "$objects" ] || { echo "layers: no objects in $build/obj/vm (build first)" >&2; exit 2; }
for o in $objects; do
  source=${o#"$build"/obj/}; source=${source%.o}.c
  [ -f "$source" ] || continue # left over from a file since moved
  nm "$o" | sed "s|^|$source |"
done | awk '
NF == 4 && $3 ~ /^[TDBR]$/ { owner[$4] = $1; next }
NF == 3 && $2 == "U" { uses[$1, $3] = 1; users[$3] = users[$3] " " $1 }
END {
  for (key in uses) {
    split(key, p, SUBSEP)
    if ((p[2] in owner) && owner[p[2]] != p[1]) calls[p[1], owner[p[2]]] = 1
  }
  for (key in calls) {
    split(key, p, SUBSEP)
    if (p[1] < p[2] && ((p[2], p[1]) in calls)) printf "%s <-> %s\n", p[1], p[2]
  }
}' | LC_ALL=C sort >"$build/layers-cycles.txt"
echo "layers: $(wc -l <"$build/layers-cycles.txt") pairs of vm/ files call each other (vm/runtime/state.h says why each may):"
sed 's/^/  /' "$build/layers-cycles.txt"
# each pair explained: a line of state.h's first comment with "<->" naming both
explained=$(sed -n '1,/\*\//p' vm/runtime/state.h | grep -e '<->')
unexplained=0
while read -r a arrow b; do
  a=${a##*/} b=${b##*/} # state.h names the files without their folders
  if ! printf '%s\n' "$explained" | grep -e "$a" | grep -q -e "$b"; then
    echo "layers: $a and $b call each other, and vm/runtime/state.h does not say why"
    unexplained=$((unexplained + 1))
  fi
done <"$build/layers-cycles.txt"
[ "$unexplained" = 0 ]
