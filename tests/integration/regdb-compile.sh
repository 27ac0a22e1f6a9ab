#!/bin/sh
# regdb compile / dump --dbtxt through the tool: the packaged regulatory.db
# written out as db.txt and compiled again gives the very same bytes (the
# layout of wireless-regdb's db2fw.py); a hand-written db.txt compiles to a
# file whose rules read back (checked by the independent decoder
# regdb-decode.py); a bad db.txt is one error line naming file and line.
set -u
B=${B:-build}
DB=$(sed -n 's/^REGDB_FILE := //p' build/config.mk)
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

"$B/regdb" --db "$DB" dump --dbtxt >"$tmp/db.txt" || { echo "dump --dbtxt failed"; exit 1; }
"$B/regdb" compile "$tmp/db.txt" -o "$tmp/re.db" || { echo "compile of the dump failed"; exit 1; }
if cmp -s "$DB" "$tmp/re.db"; then
	echo "packaged $(wc -c <"$DB")-byte database round trips byte-identical"
else
	cmp "$DB" "$tmp/re.db" | head -3
	echo "packaged -> db.txt -> compile differs from $DB"
	fail=1
fi
"$B/regdb" --db "$DB" dump --tsv >"$tmp/a.tsv"
"$B/regdb" --db "$tmp/re.db" dump --tsv >"$tmp/b.tsv"
cmp -s "$tmp/a.tsv" "$tmp/b.tsv" || { echo "round-tripped TSV differs"; fail=1; }

cat >"$tmp/mine.txt" <<'TXT'
# crafted: two touching AUTO-BW rules, a WMM rule, a CAC time, mW powers
wmmrule W:
	vo_c: cw_min=3, cw_max=7, aifsn=2, cot=2
	vi_c: cw_min=7, cw_max=15, aifsn=2, cot=4
	be_c: cw_min=15, cw_max=1023, aifsn=3, cot=6
	bk_c: cw_min=15, cw_max=1023, aifsn=7, cot=6
	vo_ap: cw_min=3, cw_max=7, aifsn=1, cot=2
	vi_ap: cw_min=7, cw_max=15, aifsn=1, cot=4
	be_ap: cw_min=15, cw_max=63, aifsn=3, cot=6
	bk_ap: cw_min=15, cw_max=1023, aifsn=7, cot=6

country QA: DFS-ETSI
	(5250 - 5350 @ 80), (100 mW), DFS, AUTO-BW, wmmrule=W
	(5150 - 5250 @ 80), (200 mW), NO-OUTDOOR, AUTO-BW
	(5470 - 5725 @ 160), (27), (120000), DFS
country QB:
	(2402 - 2482 @ 40), (20)
TXT
"$B/regdb" compile "$tmp/mine.txt" -o "$tmp/mine.db" || { echo "crafted db.txt rejected"; exit 1; }
python3 tests/integration/regdb-decode.py "$tmp/mine.db" --raw >"$tmp/want" || { echo "decoder failed"; fail=1; }
cat >"$tmp/expect" <<'TXT'
QA 2 16 18 2301 5150000 5250000 80000 0
QA 2 20 20 2000 5250000 5350000 80000 0
QA 2 18 4 2700 5470000 5725000 160000 120
QB 0 16 0 2000 2402000 2482000 40000 0
TXT
cmp -s "$tmp/want" "$tmp/expect" || { diff "$tmp/expect" "$tmp/want"; echo "crafted database laid out wrongly"; fail=1; }
"$B/regdb" --db "$tmp/mine.db" dump --dbtxt >"$tmp/mine2.txt" &&
	"$B/regdb" compile "$tmp/mine2.txt" -o "$tmp/mine2.db" && cmp -s "$tmp/mine.db" "$tmp/mine2.db" ||
	{ echo "crafted database does not round trip through dump --dbtxt"; fail=1; }
out=$("$B/regdb" --db "$tmp/mine.db" check --country QA --freq 5250 --width 160 --beacon)
[ "$out" = "allowed: max EIRP 20.00 dBm, max bandwidth 200 MHz, needs CAC 60000 ms" ] ||
	{ echo "QA 5250/160 across the AUTO-BW rules: '$out'"; fail=1; }
out=$("$B/regdb" --db "$tmp/mine.db" check --country QA --freq 5570 --width 80 --beacon)
[ "$out" = "allowed: max EIRP 27.00 dBm, max bandwidth 160 MHz, needs CAC 120000 ms" ] ||
	{ echo "QA 5570/80 with the rule's CAC: '$out'"; fail=1; }
"$B/regdb" --db "$tmp/mine.txt" dump --tsv >"$tmp/mine-txt.tsv" && "$B/regdb" --db "$tmp/mine.db" dump --tsv |
	cmp -s - "$tmp/mine-txt.tsv" || { echo "--db db.txt lists other rules than its compiled file"; fail=1; }
out=$("$B/regdb" --db "$DB" check --country DE --freq 5250 --width 160 --beacon)
case $out in "allowed:"*"needs CAC"*) ;; *) echo "packaged DE 5250/160 (AUTO-BW 5150-5350): '$out'"; fail=1 ;; esac

printf 'country QA:\n\t(5150 - 5250 @ 80), (20)\n\t(5250 - 5350 80), (20)\n' >"$tmp/bad.txt"
out=$("$B/regdb" compile "$tmp/bad.txt" -o "$tmp/bad.db" 2>&1); rc=$?
[ $rc -eq 3 ] && [ "$out" = "regdb: $tmp/bad.txt:3: expected ')' after frequency range, got '80'" ] ||
	{ echo "bad db.txt: rc=$rc '$out'"; fail=1; }
[ ! -e "$tmp/bad.db" ] || { echo "bad db.txt still wrote output"; fail=1; }
out=$("$B/regdb" --db "$tmp/bad.txt" list 2>&1); rc=$?
[ $rc -eq 3 ] && [ "$out" = "regdb: $tmp/bad.txt:3: expected ')' after frequency range, got '80'" ] ||
	{ echo "--db bad db.txt: rc=$rc '$out'"; fail=1; }
printf 'country QA:\n\t(5150 - 5250 @ 80), (20), NO-CCK\n' >"$tmp/cck.txt"
out=$("$B/regdb" compile "$tmp/cck.txt" -o "$tmp/cck.db" 2>&1); rc=$?
[ $rc -eq 3 ] && echo "$out" | grep -q "flag NO-CCK cannot be stored" || { echo "NO-CCK: rc=$rc '$out'"; fail=1; }
"$B/regdb" compile "$tmp/mine.txt" 2>/dev/null; [ $? -eq 2 ] || { echo "compile without -o should exit 2"; fail=1; }
exit $fail
