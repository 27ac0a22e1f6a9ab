#!/bin/sh
# irqchip-split.sh — payloads, SMP and SeaBIOS under -machine kernel_irqchip=split
# (see irqchip-mode.inc.sh).
exec sh "$(dirname "$0")/irqchip-mode.inc.sh" split
