#!/bin/sh
# irqchip-off.sh — payloads, SMP and SeaBIOS under -machine kernel_irqchip=off
# (see irqchip-mode.inc.sh).
exec sh "$(dirname "$0")/irqchip-mode.inc.sh" off
