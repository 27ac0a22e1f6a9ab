#!/bin/sh
# Live migration of a guest on the virtual WLAN: one Linux guest whose two
# mac80211_hwsim radios talk through vmm's medium (-object wlan-medium
# -device virtio-wlan-pci): hostapd's AP on wlan0, wpa_supplicant's station
# on wlan1 under an address of its own (02:00:00:00:01:55, not the radio's
# permanent one: hwsim announces it with ADD_MAC_ADDR when the interface
# comes up and again per scan, withdrawing the scan's), ARP across the
# air; the monitor moves the medium to FR. Then QMP migrate to a second
# vmm (-incoming unix:) while hostapd beacons and the station is
# associated. On the destination the medium must still be FR, the station
# must stay associated (no disconnect, no new association) and the AP's
# unicast ARP reply must still reach 02:00:00:00:01:55, which only the
# radios' saved state tells the new medium (wlan/medium_state.c; the DFS
# clocks are checked by tests/unit/wlan/test_medium_state.c). QEMU has no
# virtio-wlan device, so there is no reference run.
. "$(dirname "$0")/linux-wlan.inc.sh"

medium="-object wlan-medium,id=m0,country=DE -device virtio-wlan-pci,medium=m0"
# shellcheck disable=SC2086
STATION_MAC=02:00:00:00:01:55 one_guest_wlan $medium -qmp "unix:$tmp/vm.qmp,server=on,wait=off"
out=$(mon vm "wlan_country FR")
echo "$out" | grep -q "now FR" || fail "wlan_country FR: $out"

# shellcheck disable=SC2086
wlan_boot vm2 4 $medium -qmp "unix:$tmp/vm2.qmp,server=on,wait=off" -incoming "unix:$tmp/mig.sock"
for _ in $(seq 100); do [ -S "$tmp/mig.sock" ] && break; sleep 0.1; done
[ -S "$tmp/mig.sock" ] || fail "the destination does not listen on $tmp/mig.sock"
t1=$(date +%s)
PYTHONPATH=tests/integration python3 - "$tmp/vm.qmp" "$tmp/mig.sock" <<'PY' || fail "live migration"
import sys, time
from qmp_client import Qmp
q = Qmp(sys.argv[1], timeout=120)
q.ok("qmp_capabilities")
q.ok("migrate", uri="unix:" + sys.argv[2])
for _ in range(2400):
    s = q.ok("query-migrate")
    if s.get("status") in ("completed", "failed", "cancelled"):
        break
    time.sleep(0.05)
assert s.get("status") == "completed", s
print("migrated: %s ms in all, downtime %s ms" % (s.get("total-time"), s.get("downtime")))
PY
PYTHONPATH=tests/integration python3 - "$tmp/vm2.qmp" <<'PY' || fail "the destination does not run"
import sys, time
from qmp_client import Qmp
q = Qmp(sys.argv[1], timeout=60)
q.ok("qmp_capabilities")
for _ in range(600):
    if q.ok("query-status")["status"] == "running":
        break
    time.sleep(0.05)
assert q.ok("query-status")["status"] == "running", q.ok("query-status")
PY
kill "$pid_vm"
echo "vm2: running the migrated guest $(($(date +%s) - t1)) s after migrate"

info=$(mon vm2 "info wlan")
echo "$info"
echo "$info" | grep -q "^medium: country FR" || fail "the destination's medium is not FR"
across vm2 arping
[ "$rc" = 0 ] || fail "no ARP reply from the AP after the migration"
sleep 10 # hostapd and wpa_supplicant would report a lost association by now
[ "$(count_in vm2 'wlan1: CTRL-EVENT-DISCONNECTED')" = 0 ] ||
	fail "the station lost the AP across the migration"
[ "$(count_in vm2 'wlan1: CTRL-EVENT-CONNECTED')" = 0 ] ||
	fail "the station associated again after the migration"
finish vm2
echo "ok: migrated live with the AP and station associated, ARP across, medium FR after $(elapsed) s"
