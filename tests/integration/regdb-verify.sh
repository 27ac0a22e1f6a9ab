#!/bin/sh
# regdb verify: a detached PKCS#7 signature made here with a throw-away key
# verifies, and fails once one byte of the database changes. Then the packaged
# regulatory.db.p7s against Debian's wireless-regdb certificate, which Debian
# ships in linux-source-6.1 (net/wireless/certs/debian.hex), when installed.
set -u
B=${B:-build}
DB=$(sed -n 's/^REGDB_FILE := //p' build/config.mk)
[ "$(sed -n 's/^HAVE_OPENSSL := //p' build/config.mk)" = 1 ] || { echo "built without OpenSSL"; exit 77; }
command -v openssl >/dev/null || { echo "openssl command not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=regdb-test -days 2 \
	-keyout "$tmp/k.pem" -out "$tmp/c.pem" 2>/dev/null || { echo "openssl req failed"; exit 1; }
cp "$DB" "$tmp/db"
openssl smime -sign -binary -noattr -in "$tmp/db" -signer "$tmp/c.pem" -inkey "$tmp/k.pem" \
	-outform DER -out "$tmp/db.p7s" || { echo "openssl smime failed"; exit 1; }
"$B/regdb" --db "$tmp/db" verify --certs "$tmp/c.pem" || { echo "good signature rejected"; exit 1; }
out=$("$B/regdb" --db "$tmp/db" --verify --certs "$tmp/c.pem" get DE) && echo "$out" | grep -q "^country DE" ||
	{ echo "--verify with a good signature: '$out'"; exit 1; }
out=$("$B/regdb" --db "$tmp/db" --verify get DE 2>&1); rc=$?
[ $rc -eq 2 ] && echo "$out" | grep -q "needs --certs" || { echo "--verify without --certs: rc=$rc '$out'"; exit 1; }
printf 'X' | dd of="$tmp/db" bs=1 seek=100 conv=notrunc 2>/dev/null
"$B/regdb" --db "$tmp/db" verify --certs "$tmp/c.pem" 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "does not verify" "$tmp/err" || { echo "tampered db accepted"; exit 1; }
out=$("$B/regdb" --db "$tmp/db" --verify --certs "$tmp/c.pem" get DE 2>&1); rc=$?
[ $rc -eq 1 ] && echo "$out" | grep -q "does not verify" && ! echo "$out" | grep -q "^country" ||
	{ echo "--verify loaded a tampered db: rc=$rc '$out'"; exit 1; }
rm "$tmp/db.p7s"
out=$("$B/regdb" --db "$tmp/db" --verify --certs "$tmp/c.pem" list 2>&1); rc=$?
[ $rc -eq 3 ] && echo "$out" | grep -q "db.p7s: No such file" || { echo "--verify without .p7s: rc=$rc '$out'"; exit 1; }
tarball=/usr/src/linux-source-6.1.tar.xz
if [ -f "$tarball" ] && [ -f "$DB.p7s" ]; then
	tar -xJOf "$tarball" linux-source-6.1/net/wireless/certs/debian.hex >"$tmp/debian.hex" ||
		{ echo "cannot extract debian.hex"; exit 1; }
	python3 -c "import re,sys; sys.stdout.buffer.write(bytes(int(x, 16) for x in re.findall(r'0x([0-9a-fA-F]{2})', open(sys.argv[1]).read())))" \
		"$tmp/debian.hex" >"$tmp/debian.der"
	"$B/regdb" --db "$DB" verify --certs "$tmp/debian.der" || { echo "packaged signature rejected"; exit 1; }
else
	echo "note: $tarball not installed, packaged signature not checked"
fi
