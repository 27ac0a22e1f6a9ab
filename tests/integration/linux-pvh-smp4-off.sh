#!/bin/sh
# Linux guest: pvh boot, 4 vCPU(s), -machine kernel_irqchip=off (see linux-boot.inc.sh).
exec sh "$(dirname "$0")/linux-boot.inc.sh" pvh 4 kernel_irqchip=off
