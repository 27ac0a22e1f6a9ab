#!/bin/sh
# Linux guest whose two mac80211_hwsim radios talk through vmm's medium
# (-object wlan-medium,country=DE -device virtio-wlan-pci): hostapd's AP on
# channel 36 (5180 MHz, allowed under DE), wpa_supplicant's station
# associates, ARP crosses the air. Then the monitor's `wlan_country BD`
# makes the medium drop every frame there: the station loses the AP, stays
# off it and `info wlan` counts no-rule drops; `wlan_country DE` again: it
# reassociates and ARP crosses again (domain_cycle in linux-wlan.inc.sh).
# The guest's own domain stays DE throughout: only the medium enforces.
# (WLAN_MEDIUM_OPTS=,enforce=off shows the test failing without enforcement.)
. "$(dirname "$0")/linux-wlan.inc.sh"

one_guest_wlan -object "wlan-medium,id=m0,country=DE${WLAN_MEDIUM_OPTS:-}" \
	-device virtio-wlan-pci,medium=m0
domain_cycle "mon vm" vm arping
finish vm
echo "ok: through vmm's medium: associate, ARP, lost under BD, back under DE after $(elapsed) s"
