#!/bin/sh
# Linux guest: bzimage boot, 1 vCPU(s), clean poweroff (see linux-boot.inc.sh).
exec sh "$(dirname "$0")/linux-boot.inc.sh" bzimage 1
