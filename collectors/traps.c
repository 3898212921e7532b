/* traps: exit reason names; see traps.h. */
#include "traps.h"

#include <errno.h>
#include <stdio.h>

struct code_name {
	int64_t code;
	const char *name;
};

/* DESIGN §4.2 (arch/powerpc/include/asm/kvm_asm.h BOOK3S_INTERRUPT_*). */
static const struct code_name power_traps[] = {
	{ 0x0, "HANDLED_IN_KERNEL" },
	{ 0x100, "SYSTEM_RESET" },
	{ 0x200, "MACHINE_CHECK" },
	{ 0x300, "DATA_STORAGE" },
	{ 0x380, "DATA_SEGMENT" },
	{ 0x400, "INST_STORAGE" },
	{ 0x480, "INST_SEGMENT" },
	{ 0x500, "EXTERNAL" },
	{ 0x501, "EXTERNAL_LEVEL" },
	{ 0x502, "EXTERNAL_HV" },
	{ 0x600, "ALIGNMENT" },
	{ 0x700, "PROGRAM" },
	{ 0x800, "FP_UNAVAIL" },
	{ 0x900, "DECREMENTER" },
	{ 0x980, "HV_DECREMENTER" },
	{ 0xa00, "DOORBELL" },
	{ 0xc00, "SYSCALL" },
	{ 0xd00, "TRACE" },
	{ 0xe00, "H_DATA_STORAGE" },
	{ 0xe20, "H_INST_STORAGE" },
	{ 0xe40, "H_EMUL_ASSIST" },
	{ 0xe60, "HMI" },
	{ 0xe80, "H_DOORBELL" },
	{ 0xea0, "H_VIRT" },
	{ 0xf00, "PERFMON" },
	{ 0xf20, "ALTIVEC" },
	{ 0xf40, "VSX" },
	{ 0xf60, "FAC_UNAVAIL" },
	{ 0xf80, "H_FAC_UNAVAIL" },
	{ 0x1500, "HV_SOFTPATCH" },
	{ 0x1980, "NESTED_HV_DECREMENTER" },
	{ 0x5555, "HV_RM_HARD" },
};

/* Intel SDM vol. 3 appendix C, basic exit reasons (arch/x86/include/uapi/asm/vmx.h). */
static const struct code_name vmx_reasons[] = {
	{ 0, "EXCEPTION_NMI" }, { 1, "EXTERNAL_INTERRUPT" }, { 2, "TRIPLE_FAULT" },
	{ 3, "INIT_SIGNAL" }, { 4, "SIPI_SIGNAL" }, { 7, "INTERRUPT_WINDOW" },
	{ 8, "NMI_WINDOW" }, { 9, "TASK_SWITCH" }, { 10, "CPUID" }, { 12, "HLT" },
	{ 13, "INVD" }, { 14, "INVLPG" }, { 15, "RDPMC" }, { 16, "RDTSC" },
	{ 18, "VMCALL" }, { 19, "VMCLEAR" }, { 20, "VMLAUNCH" }, { 21, "VMPTRLD" },
	{ 22, "VMPTRST" }, { 23, "VMREAD" }, { 24, "VMRESUME" }, { 25, "VMWRITE" },
	{ 26, "VMOFF" }, { 27, "VMON" }, { 28, "CR_ACCESS" }, { 29, "DR_ACCESS" },
	{ 30, "IO_INSTRUCTION" }, { 31, "MSR_READ" }, { 32, "MSR_WRITE" },
	{ 33, "INVALID_STATE" }, { 34, "MSR_LOAD_FAIL" }, { 36, "MWAIT_INSTRUCTION" },
	{ 37, "MONITOR_TRAP_FLAG" }, { 39, "MONITOR_INSTRUCTION" },
	{ 40, "PAUSE_INSTRUCTION" }, { 41, "MCE_DURING_VMENTRY" },
	{ 43, "TPR_BELOW_THRESHOLD" }, { 44, "APIC_ACCESS" }, { 45, "EOI_INDUCED" },
	{ 46, "GDTR_IDTR" }, { 47, "LDTR_TR" }, { 48, "EPT_VIOLATION" },
	{ 49, "EPT_MISCONFIG" }, { 50, "INVEPT" }, { 51, "RDTSCP" },
	{ 52, "PREEMPTION_TIMER" }, { 53, "INVVPID" }, { 54, "WBINVD" },
	{ 55, "XSETBV" }, { 56, "APIC_WRITE" }, { 57, "RDRAND" }, { 58, "INVPCID" },
	{ 59, "VMFUNC" }, { 60, "ENCLS" }, { 61, "RDSEED" }, { 62, "PML_FULL" },
	{ 63, "XSAVES" }, { 64, "XRSTORS" }, { 67, "UMWAIT" }, { 68, "TPAUSE" },
	{ 74, "BUS_LOCK" }, { 75, "NOTIFY" },
};

/* AMD APM vol. 2 appendix C (arch/x86/include/uapi/asm/svm.h), minus ranges. */
static const struct code_name svm_codes[] = {
	{ 0x060, "INTR" }, { 0x061, "NMI" }, { 0x062, "SMI" }, { 0x063, "INIT" },
	{ 0x064, "VINTR" }, { 0x065, "CR0_SEL_WRITE" }, { 0x066, "IDTR_READ" },
	{ 0x067, "GDTR_READ" }, { 0x068, "LDTR_READ" }, { 0x069, "TR_READ" },
	{ 0x06a, "IDTR_WRITE" }, { 0x06b, "GDTR_WRITE" }, { 0x06c, "LDTR_WRITE" },
	{ 0x06d, "TR_WRITE" }, { 0x06e, "RDTSC" }, { 0x06f, "RDPMC" }, { 0x070, "PUSHF" },
	{ 0x071, "POPF" }, { 0x072, "CPUID" }, { 0x073, "RSM" }, { 0x074, "IRET" },
	{ 0x075, "SWINT" }, { 0x076, "INVD" }, { 0x077, "PAUSE" }, { 0x078, "HLT" },
	{ 0x079, "INVLPG" }, { 0x07a, "INVLPGA" }, { 0x07b, "IOIO" }, { 0x07c, "MSR" },
	{ 0x07d, "TASK_SWITCH" }, { 0x07e, "FERR_FREEZE" }, { 0x07f, "SHUTDOWN" },
	{ 0x080, "VMRUN" }, { 0x081, "VMMCALL" }, { 0x082, "VMLOAD" }, { 0x083, "VMSAVE" },
	{ 0x084, "STGI" }, { 0x085, "CLGI" }, { 0x086, "SKINIT" }, { 0x087, "RDTSCP" },
	{ 0x088, "ICEBP" }, { 0x089, "WBINVD" }, { 0x08a, "MONITOR" }, { 0x08b, "MWAIT" },
	{ 0x08c, "MWAIT_COND" }, { 0x08d, "XSETBV" }, { 0x08e, "RDPRU" },
	{ 0x08f, "EFER_WRITE_TRAP" }, { 0x0a0, "INVPCID" }, { 0x0a5, "BUS_LOCK" },
	{ 0x0a6, "IDLE_HLT" }, { 0x400, "NPF" }, { 0x401, "AVIC_INCOMPLETE_IPI" },
	{ 0x402, "AVIC_UNACCELERATED_ACCESS" }, { 0x403, "VMGEXIT" }, { -1, "ERR" },
};

/* include/uapi/linux/kvm.h KVM_EXIT_*. */
static const char *const userspace_exits[] = {
	"UNKNOWN", "EXCEPTION", "IO", "HYPERCALL", "DEBUG", "HLT", "MMIO",
	"IRQ_WINDOW_OPEN", "SHUTDOWN", "FAIL_ENTRY", "INTR", "SET_TPR", "TPR_ACCESS",
	"S390_SIEIC", "S390_RESET", "DCR", "NMI", "INTERNAL_ERROR", "OSI", "PAPR_HCALL",
	"S390_UCONTROL", "WATCHDOG", "S390_TSCH", "EPR", "SYSTEM_EVENT", "S390_STSI",
	"IOAPIC_EOI", "HYPERV", "ARM_NISV", "X86_RDMSR", "X86_WRMSR", "DIRTY_RING_FULL",
	"AP_RESET_HOLD", "X86_BUS_LOCK", "XEN", "RISCV_SBI", "RISCV_CSR", "NOTIFY",
	"LOONGARCH_IOCSR", "MEMORY_FAULT",
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static const char *lookup(const struct code_name *t, size_t n, int64_t code)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].code == code)
			return t[i].name;
	return NULL;
}

/* SVM encodes whole ranges (CRn, DRn, exception vectors): name them by index. */
static const char *svm_range_name(int64_t code)
{
	static const char *const ranges[][16] = {
		{ "READ_CR0", "READ_CR1", "READ_CR2", "READ_CR3", "READ_CR4", "READ_CR5",
		  "READ_CR6", "READ_CR7", "READ_CR8", "READ_CR9", "READ_CR10", "READ_CR11",
		  "READ_CR12", "READ_CR13", "READ_CR14", "READ_CR15" },
		{ "WRITE_CR0", "WRITE_CR1", "WRITE_CR2", "WRITE_CR3", "WRITE_CR4",
		  "WRITE_CR5", "WRITE_CR6", "WRITE_CR7", "WRITE_CR8", "WRITE_CR9",
		  "WRITE_CR10", "WRITE_CR11", "WRITE_CR12", "WRITE_CR13", "WRITE_CR14",
		  "WRITE_CR15" },
		{ "READ_DR0", "READ_DR1", "READ_DR2", "READ_DR3", "READ_DR4", "READ_DR5",
		  "READ_DR6", "READ_DR7", "READ_DR8", "READ_DR9", "READ_DR10", "READ_DR11",
		  "READ_DR12", "READ_DR13", "READ_DR14", "READ_DR15" },
		{ "WRITE_DR0", "WRITE_DR1", "WRITE_DR2", "WRITE_DR3", "WRITE_DR4",
		  "WRITE_DR5", "WRITE_DR6", "WRITE_DR7", "WRITE_DR8", "WRITE_DR9",
		  "WRITE_DR10", "WRITE_DR11", "WRITE_DR12", "WRITE_DR13", "WRITE_DR14",
		  "WRITE_DR15" },
		{ "EXCP_DE", "EXCP_DB", "EXCP_NMI", "EXCP_BP", "EXCP_OF", "EXCP_BR",
		  "EXCP_UD", "EXCP_NM", "EXCP_DF", "EXCP_9", "EXCP_TS", "EXCP_NP", "EXCP_SS",
		  "EXCP_GP", "EXCP_PF", "EXCP_15" },
		{ "EXCP_MF", "EXCP_AC", "EXCP_MC", "EXCP_XM", "EXCP_VE", "EXCP_CP",
		  "EXCP_22", "EXCP_23", "EXCP_24", "EXCP_25", "EXCP_26", "EXCP_27",
		  "EXCP_HV", "EXCP_VC", "EXCP_SX", "EXCP_31" },
	};
	if (code >= 0 && code < 0x60)
		return ranges[code / 16][code % 16];
	if (code >= 0x90 && code < 0xa0) {
		static const char *const traps[16] = {
			"CR0_WRITE_TRAP", "CR1_WRITE_TRAP", "CR2_WRITE_TRAP", "CR3_WRITE_TRAP",
			"CR4_WRITE_TRAP", "CR5_WRITE_TRAP", "CR6_WRITE_TRAP", "CR7_WRITE_TRAP",
			"CR8_WRITE_TRAP", "CR9_WRITE_TRAP", "CR10_WRITE_TRAP", "CR11_WRITE_TRAP",
			"CR12_WRITE_TRAP", "CR13_WRITE_TRAP", "CR14_WRITE_TRAP", "CR15_WRITE_TRAP",
		};
		return traps[code - 0x90];
	}
	return NULL;
}

const char *traps_source_name(enum exit_source src)
{
	switch (src) {
	case EXIT_SRC_POWER: return "powerpc";
	case EXIT_SRC_VMX: return "vmx";
	case EXIT_SRC_SVM: return "svm";
	case EXIT_SRC_USERSPACE: return "userspace";
	}
	return "unknown";
}

const char *traps_name(enum exit_source src, int64_t code)
{
	const char *n;
	switch (src) {
	case EXIT_SRC_POWER:
		return lookup(power_traps, NELEM(power_traps), code);
	case EXIT_SRC_VMX:
		/* Bits 16-31 are flags (failed entry, enclave); the name is the basic reason. */
		if (code < 0 || code > UINT32_MAX)
			return NULL;
		return lookup(vmx_reasons, NELEM(vmx_reasons), code & 0xffff);
	case EXIT_SRC_SVM:
		/* kvm_exit's exit_reason is 32 bits: SVM_EXIT_ERR (-1) arrives as 0xffffffff. */
		if (code == UINT32_MAX)
			code = -1;
		n = lookup(svm_codes, NELEM(svm_codes), code);
		return n ? n : svm_range_name(code);
	case EXIT_SRC_USERSPACE:
		if (code >= 0 && (uint64_t)code < NELEM(userspace_exits))
			return userspace_exits[code];
		/* A failed KVM_RUN (decode.h): -EINTR is the kernel's "restart". */
		return code == -EINTR ? "RESTART" : NULL;
	}
	return NULL;
}

const char *traps_format(enum exit_source src, int64_t code, char *buf, size_t len)
{
	const char *n = traps_name(src, code);
	if (n)
		snprintf(buf, len, "%s", n);
	else if (code < 0)
		snprintf(buf, len, "-0x%llx", (unsigned long long)-(uint64_t)code);
	else
		snprintf(buf, len, "0x%llx", (unsigned long long)code);
	return buf;
}
