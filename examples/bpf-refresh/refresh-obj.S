/* SPDX-License-Identifier: MIT */
/* refresh.bpf.o inside the binary: the test VM gets one file per program. */
	.section .rodata
	.balign 8
	.globl refresh_bpf_obj
refresh_bpf_obj:
	.incbin "refresh.bpf.o"
	.globl refresh_bpf_obj_end
refresh_bpf_obj_end:
	.section .note.GNU-stack, "", @progbits
