#!/bin/sh
# regdb dump --tsv must list every country and rule exactly as the packaged
# regulatory.db holds them; the expectation comes from an independent decoder
# (tests/integration/regdb-decode.py, python3 struct) reading the same file.
# Also checks a few tool exit codes.
set -u
B=${B:-build}
DB=$(sed -n 's/^REGDB_FILE := //p' build/config.mk)
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 tests/integration/regdb-decode.py "$DB" >"$tmp/want" || { echo "decoder failed"; exit 1; }
"$B/regdb" --db "$DB" dump --tsv >"$tmp/got" || { echo "regdb dump failed"; exit 1; }
if ! cmp -s "$tmp/want" "$tmp/got"; then
	diff "$tmp/want" "$tmp/got" | head -20
	echo "regdb dump --tsv differs from the independent decoder"
	exit 1
fi
echo "dump: $(wc -l <"$tmp/got") rules identical"
fail=0
"$B/regdb" --db "$DB" check --country DE --freq 5530 --width 80 --beacon | grep -q "needs CAC" || { echo "DE 5530/80 beacon should need CAC"; fail=1; }
"$B/regdb" --db "$DB" check --country DE --freq 5180 --width 20 --outdoor >/dev/null; [ $? -eq 1 ] || { echo "DE 5180 outdoor should be denied"; fail=1; }
"$B/regdb" --db "$DB" intersect US DE | head -n 1 | grep -qx "country 98: DFS-UNSET" || { echo "intersect US DE should give 98"; fail=1; }
[ "$("$B/regdb" --db "$DB" lookup 276 | cut -f1,2)" = "$(printf 'DE\tDEU')" ] || { echo "lookup 276 should be DE DEU"; fail=1; }
"$B/regdb" get ZZ 2>/dev/null; [ $? -eq 1 ] || { echo "get ZZ should exit 1"; fail=1; }
head -c 100 "$DB" >"$tmp/trunc.db"
out=$("$B/regdb" --db "$tmp/trunc.db" list 2>&1); rc=$?
[ $rc -eq 3 ] && echo "$out" | grep -q "past end of file" || { echo "truncated db: rc=$rc '$out'"; fail=1; }
"$B/regdb" --db /nonexistent list 2>/dev/null; [ $? -eq 3 ] || { echo "missing db should exit 3"; fail=1; }
"$B/regdb" bogus 2>/dev/null; [ $? -eq 2 ] || { echo "bad sub-command should exit 2"; fail=1; }
exit $fail
