#!/bin/sh
# linux-wlan-migrate.sh on what users run: Debian's packaged kernel with
# its own mac80211_hwsim module (linux-wlan-debian.sh's guest). The AP and
# the station under its own address stay associated through a live
# migration over unix:, and the medium's FR and the radios' addresses
# arrive on the destination. No kernel build, so make check runs it.
# needs: native ring 0 (Debian's kernel; scripts/nested-kvm/place.sh)
WLAN_KERNEL=debian
. "$(dirname "$0")/linux-wlan-migrate.sh"
