#!/bin/sh
# Linux guest: bzimage boot, 4 vCPU(s), clean poweroff (see linux-boot.inc.sh).
exec sh "$(dirname "$0")/linux-boot.inc.sh" bzimage 4
