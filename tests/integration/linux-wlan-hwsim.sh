#!/bin/sh
# Linux guest with mac80211_hwsim's two radios and NO virtio-wlan-pci
# device, so hwsim's in-kernel medium carries the frames: the WLAN userspace
# (hostapd AP on channel 36 under DE, wpa_supplicant station, ip, arping)
# works on its own. The reference for linux-wlan-medium.sh, which runs the
# same through vmm's medium; prints the same timings.
. "$(dirname "$0")/linux-wlan.inc.sh"

one_guest_wlan
finish vm
echo "ok: in-kernel hwsim medium: AP, station, ARP across after $(elapsed) s"
