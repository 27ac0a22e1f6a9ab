#!/bin/sh
# Linux guest: pvh boot, 1 vCPU(s), -machine kernel_irqchip=split (see linux-boot.inc.sh).
exec sh "$(dirname "$0")/linux-boot.inc.sh" pvh 1 kernel_irqchip=split
