#!/bin/sh
# The layering rules of README's Layout, checked on the source.  Layers,
# lowest first: util/, model/, then schema/ and collectors/ (side by side,
# neither includes the other), then decide/ (the decision engine, pure: it
# reads schema/'s rows), then experiments/, then advisor/.  A folder
# includes its own headers and those of the layers below, never one above
# or beside it:
#  - util/ only util/; model/ only util/;
#  - schema/ and collectors/ only model/ and util/;
#  - decide/ only schema/, model/ and util/ (never collectors/, experiments/, advisor/);
#  - experiments/ only decide/, schema/, collectors/, model/ and util/ (not advisor/);
#  - advisor/ anything;
# whether written "../dir/x.h" or "dir/x.h" (the build has -I.).
#  - a host knob is defined only in the knob table: no C code outside model/
#    names a knob (as a string literal) or its file.
# Comments are stripped first (by the C preprocessor), so a knob may be
# mentioned in prose.  Set LAYERING_SRC to check another tree (the test
# does, to see each rule fail).
. "$TA_TOP/tests/lib.sh"
ta_tmpdir

list="$TA_BUILD/tests/helpers/knob-list"
[ -x "$list" ] || fail "$list is missing (make units)"
cc=${CC:-cc}
command -v "$cc" >/dev/null 2>&1 || skip "no C compiler ($cc) to strip comments"

# check_tree DIR: prints one line per violation, nothing when DIR is clean.
check_tree() {
	src=$1
	for dir in util model schema collectors decide experiments; do
		case $dir in
		util) allowed='util' ;;
		model) allowed='model|util' ;;
		schema|collectors) allowed="$dir|model|util" ;;
		decide) allowed='decide|schema|model|util' ;;
		experiments) allowed='experiments|decide|schema|collectors|model|util' ;;
		esac
		for f in "$src/$dir"/*.[ch]; do
			[ -e "$f" ] || continue
			grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"(\.\./)?(util|model|schema|collectors|decide|experiments|advisor)/' "$f" |
				grep -vE "\"(\.\./)?($allowed)/" |
				sed "s|^|${f#"$src"/}:|; s|\$| (not allowed in $dir/)|"
		done
	done
	"$list" >"$tmp/knobs" || { echo "knob-list failed"; return; }
	for dir in util schema decide experiments collectors advisor; do
		for f in "$src/$dir"/*.[ch]; do
			[ -e "$f" ] || continue
			"$cc" -fpreprocessed -dD -E -P "$f" 2>/dev/null >"$tmp/code" ||
				cp "$f" "$tmp/code"
			while IFS='	' read -r name path; do
				base=${path##*/}
				two=$(printf '%s\n' "$path" | awk -F/ '{ print $(NF-1) "/" $NF }')
				if grep -qF "\"$name\"" "$tmp/code"; then
					echo "${f#"$src"/}: names knob '$name' (define knobs only in model/knob-table.c)"
				fi
				if grep -qF "$two\"" "$tmp/code"; then
					echo "${f#"$src"/}: names $path, the file of knob '$name'"
				elif [ ${#base} -ge 8 ] && grep -qF "/$base\"" "$tmp/code"; then
					echo "${f#"$src"/}: names .../$base, the file of knob '$name'"
				fi
			done <"$tmp/knobs"
		done
	done
}

top=${LAYERING_SRC:-$TA_TOP}
check_tree "$top" >"$tmp/violations"
if [ -s "$tmp/violations" ]; then
	cat "$tmp/violations" >&2
	fail "layering rules broken (see above)"
fi

# Each rule catches what it is for: a copy of the tree with one violation each.
mkdir "$tmp/tree"
for dir in util model schema decide experiments collectors advisor; do
	mkdir "$tmp/tree/$dir"
	cp "$top/$dir"/*.[ch] "$tmp/tree/$dir/"
done
# One include against each rule, and the same written without "../".
printf '#include "../model/bench-kind.h"\n' >>"$tmp/tree/util/strbuf.c"
printf '#include "../advisor/cmd.h"\n' >>"$tmp/tree/model/knob-table.c"
printf '#include "../schema/db.h"\n' >>"$tmp/tree/model/bench-kind.c"
printf '#include "../experiments/config.h"\n' >>"$tmp/tree/schema/db.h"
printf '#include "../collectors/gang.h"\n' >>"$tmp/tree/schema/db-runs.c"
printf '#include "../schema/db.h"\n' >>"$tmp/tree/collectors/traps.c"
printf '#include "../advisor/rank.h"\n' >>"$tmp/tree/collectors/live.c"
printf '#include "../advisor/sweep.h"\n' >>"$tmp/tree/experiments/controller.c"
printf '#include "advisor/cmd.h"\n' >>"$tmp/tree/experiments/plan.c"
printf '#include "../experiments/plan.h"\n' >>"$tmp/tree/decide/engine.c"
printf '#include "../collectors/gang.h"\n' >>"$tmp/tree/decide/paired.c"
printf '#include "../decide/decide.h"\n' >>"$tmp/tree/schema/db-race.c"
printf 'static const char *const k[] = { "kvm_hv.one_vm_per_core", NULL };\n' \
	>>"$tmp/tree/advisor/rank.c"
printf 'static const char *const p = "/sys/kernel/mm/ksm/run";\n' \
	>>"$tmp/tree/experiments/plan.c"
printf 'static const char *const q = SYS "/numa_balancing";\n' \
	>>"$tmp/tree/collectors/gang.c"
printf '/* "smt" in a comment is fine */\n' >>"$tmp/tree/experiments/noise.c"
check_tree "$tmp/tree" >"$tmp/seen"
for want in "util/strbuf.c:.*model/bench-kind.h" "model/knob-table.c:.*advisor/cmd.h" \
	"model/bench-kind.c:.*schema/db.h" "schema/db.h:.*experiments/config.h" \
	"schema/db-runs.c:.*collectors/gang.h" "collectors/traps.c:.*schema/db.h" \
	"collectors/live.c:.*advisor/rank.h" "experiments/controller.c:.*advisor/sweep.h" \
	"experiments/plan.c:.*advisor/cmd.h" "decide/engine.c:.*experiments/plan.h" \
	"decide/paired.c:.*collectors/gang.h" "schema/db-race.c:.*decide/decide.h" \
	"advisor/rank.c: names knob 'kvm_hv.one_vm_per_core'" \
	"experiments/plan.c: names sys/kernel/mm/ksm/run" \
	"collectors/gang.c: names .../numa_balancing"; do
	grep -q "$want" "$tmp/seen" || { cat "$tmp/seen" >&2; fail "not caught: $want"; }
done
! grep -q "experiments/noise.c" "$tmp/seen" || fail "a knob named in a comment was flagged"
[ "$(wc -l <"$tmp/seen")" -eq 15 ] || { cat "$tmp/seen" >&2; fail "unexpected extra findings"; }
pass
