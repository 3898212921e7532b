#!/bin/sh
# The layering rules of README's Layout, checked on the source:
#  - util/ includes only util/; model/ only model/ and util/;
#  - nothing in schema/ or collectors/ includes decide/, experiments/ or advisor/;
#  - decide/ (the decision engine, pure) includes only util/, model/, schema/
#    and itself: never experiments/, collectors/ or advisor/;
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
	for dir in util model schema collectors decide; do
		case $dir in
		util) allowed='util' ;;
		model) allowed='model|util' ;;
		decide) allowed='model|util|schema|decide' ;;
		*) allowed='model|util|schema|collectors' ;;	# not decide/, experiments/, advisor/
		esac
		for f in "$src/$dir"/*.[ch]; do
			[ -e "$f" ] || continue
			grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"\.\./' "$f" |
				grep -vE "\"\.\./($allowed)/" |
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
printf '#include "../experiments/config.h"\n' >>"$tmp/tree/schema/db.h"
printf '#include "../advisor/cmd.h"\n' >>"$tmp/tree/model/knob-table.c"
printf '#include "../experiments/plan.h"\n' >>"$tmp/tree/decide/engine.c"
printf '#include "../decide/decide.h"\n' >>"$tmp/tree/schema/db-race.c"
printf 'static const char *const k[] = { "kvm_hv.one_vm_per_core", NULL };\n' \
	>>"$tmp/tree/advisor/rank.c"
printf 'static const char *const p = "/sys/kernel/mm/ksm/run";\n' \
	>>"$tmp/tree/experiments/plan.c"
printf 'static const char *const q = SYS "/numa_balancing";\n' \
	>>"$tmp/tree/collectors/gang.c"
printf '/* "smt" in a comment is fine */\n' >>"$tmp/tree/experiments/noise.c"
check_tree "$tmp/tree" >"$tmp/seen"
for want in "schema/db.h:.*experiments/config.h" "model/knob-table.c:.*advisor/cmd.h" \
	"decide/engine.c:.*experiments/plan.h" "schema/db-race.c:.*decide/decide.h" \
	"advisor/rank.c: names knob 'kvm_hv.one_vm_per_core'" \
	"experiments/plan.c: names sys/kernel/mm/ksm/run" \
	"collectors/gang.c: names .../numa_balancing"; do
	grep -q "$want" "$tmp/seen" || { cat "$tmp/seen" >&2; fail "not caught: $want"; }
done
! grep -q "experiments/noise.c" "$tmp/seen" || fail "a knob named in a comment was flagged"
[ "$(wc -l <"$tmp/seen")" -eq 7 ] || { cat "$tmp/seen" >&2; fail "unexpected extra findings"; }
pass
