#!/bin/sh
# What users run on the virtual WLAN: Debian's packaged kernel with its own
# mac80211_hwsim module (and cfg80211 checking regulatory.db's signature),
# not the project's guest kernel. Its two radios talk through vmm's medium
# (-object wlan-medium,country=DE -device virtio-wlan-pci): hostapd's AP on
# channel 36, wpa_supplicant's station associates, ARP crosses the air;
# under `wlan_country BD` the medium drops everything and the station loses
# the AP; under DE again it reassociates (domain_cycle in linux-wlan.inc.sh).
# QEMU has no virtio-wlan device: no reference run.
# needs: native ring 0 (Debian's kernel; scripts/nested-kvm/place.sh)
WLAN_KERNEL=debian
. "$(dirname "$0")/linux-wlan.inc.sh"

one_guest_wlan -object "wlan-medium,id=m0,country=DE" -device virtio-wlan-pci,medium=m0
# the radios are the module's, under the packaged kernel
run_in vm "uname -r | grep -qx '$kver' && grep -q '^mac80211_hwsim ' /proc/modules"
[ "$rc" = 0 ] || fail "the guest does not run $kver with mac80211_hwsim as a module"
domain_cycle "mon vm" vm arping
finish vm
echo "ok: Debian's kernel and mac80211_hwsim through vmm's medium: associate, ARP, lost under BD, back under DE after $(elapsed) s"
