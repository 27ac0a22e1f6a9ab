#!/bin/sh
# irqchip-on.sh — kernel_irqchip=on (KVM's irqchip): SeaBIOS timer interrupts and
# the monitor's info pic/ioapic/lapic/irq on it (see irqchip-mode.inc.sh).
exec sh "$(dirname "$0")/irqchip-mode.inc.sh" on
