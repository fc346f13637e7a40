/* SPDX-License-Identifier: MIT */
/*
 * What the BPF program (refresh.bpf.c) and the service agree on, in a
 * header both compilers read: no libc here.
 */
#ifndef REFRESH_H
#define REFRESH_H

/* The service's UDP port. */
#define REFRESH_PORT		7400

#endif /* REFRESH_H */
