/* xhci_internal.h — what xhci.c and xhci_state.c share: the register
 * layout, the controller's state and its microframe counter. */
#ifndef VMM_DEVICES_USB_XHCI_INTERNAL_H
#define VMM_DEVICES_USB_XHCI_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "devices/pci/pci.h"
#include "devices/usb/usb.h"

/* BAR 0 layout */
#define XHCI_BAR_SIZE 0x4000u
#define OP_BASE 0x40u
#define RT_BASE 0x1000u
#define DB_BASE 0x2000u
#define XECP_BASE 0x20u
#define XHCI_VERSION 0x0100u
#define XHCI_SLOTS 64u
#define XHCI_INTRS 1u

/* capability registers */
#define CAP_LENGTH_VERSION 0x00u
#define CAP_HCSPARAMS1 0x04u
#define CAP_HCCPARAMS1 0x10u
#define CAP_DBOFF 0x14u
#define CAP_RTSOFF 0x18u
#define HCC_AC64 0x1u
#define XECP_PROTOCOL 0x02u
#define PROTOCOL_NAME_USB 0x20425355u /* "USB " */

/* operational registers, from OP_BASE */
#define OP_USBCMD 0x00u
#define OP_USBSTS 0x04u
#define OP_PAGESIZE 0x08u
#define OP_DNCTRL 0x14u
#define OP_CRCR 0x18u
#define OP_DCBAAP 0x30u
#define OP_CONFIG 0x38u
#define OP_PORTS 0x400u
#define PORT_STRIDE 0x10u

#define CMD_RS 0x001u
#define CMD_HCRST 0x002u
#define CMD_INTE 0x004u
#define CMD_CSS 0x100u
#define CMD_CRS 0x200u
#define CMD_MASK 0xc0fu
#define STS_HCH 0x001u
#define STS_HSE 0x004u
#define STS_EINT 0x008u
#define STS_PCD 0x010u
#define STS_SRE 0x400u
#define STS_W1C (STS_HSE | STS_EINT | STS_PCD | STS_SRE)
#define CRCR_RCS 0x1u
#define CRCR_CS 0x2u
#define CRCR_CA 0x4u
#define CRCR_CRR 0x8u

#define PORTSC_PP (1u << 9)
#define PORTSC_PLS_SHIFT 5
#define PLS_RX_DETECT 5u
#define PORTSC_W1C 0x00fe0000u		    /* CSC PEC WRC OCC PRC PLC CEC */
#define PORTSC_RW (PORTSC_PP | 0x0e000000u) /* power, wake on connect/disconnect/over-current */

/* runtime registers, from RT_BASE */
#define RT_MFINDEX 0x00u
#define RT_INTR0 0x20u
#define RT_INTR_SIZE 0x20u
#define RT_IMAN (RT_INTR0 + 0x00u)
#define RT_IMOD (RT_INTR0 + 0x04u)
#define RT_ERSTSZ (RT_INTR0 + 0x08u)
#define RT_ERSTBA (RT_INTR0 + 0x10u)
#define RT_ERDP (RT_INTR0 + 0x18u)
#define IMAN_IP 0x1u
#define IMAN_IE 0x2u
#define ERDP_EHB 0x8ull

/* TRBs */
#define TRB_SIZE 16u
#define TRB_CYCLE 0x1u
#define LINK_TOGGLE 0x2u
#define TRB_TYPE(control) (((control) >> 10) & 0x3fu)
#define TRB_LINK 6u
#define CMD_ENABLE_SLOT 9u
#define CMD_DISABLE_SLOT 10u
#define CMD_NOOP 23u
#define EV_COMMAND_COMPLETE 33u
#define CC_SUCCESS 1u
#define CC_TRB_ERROR 5u
#define CC_NO_SLOTS 9u
#define CC_SLOT_NOT_ENABLED 11u
#define CC_COMMAND_RING_STOPPED 24u
#define CMD_RING_BOUND 256u

struct xhci_intr {
	uint32_t iman, imod, erstsz;
	uint64_t erstba, erdp;
	/* the event ring segment ERST entry 0 names (read when ERSTBA is set) */
	uint64_t seg_base;
	uint32_t seg_trbs, enq;
	bool pcs, ring_ok;
};

struct xhci {
	struct pci_dev pci;
	struct dev_host *host;
	pthread_mutex_t lock;
	unsigned msi_cap, p2, p3, nports;
	uint32_t usbcmd, usbsts, dnctrl, config;
	uint64_t dcbaap, cmd_deq;
	bool cmd_ccs, cmd_running;
	uint32_t portsc[2 * XHCI_MAX_PORTS_PER_PROTO];
	bool slot_enabled[XHCI_SLOTS + 1];
	struct xhci_intr intr;
	struct timespec run_start;
	bool irq_level;
	bool ring_error_logged;
};

struct trb {
	uint64_t param;
	uint32_t status, control;
};

/* MFINDEX: 125 us microframes since Run/Stop was set (lock held). */
uint32_t xhci_mfindex(const struct xhci *x);

#endif /* VMM_DEVICES_USB_XHCI_INTERNAL_H */
