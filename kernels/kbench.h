/* kbench.h: the CPU kernels' benchmark, and memory bandwidth measured the
 * STREAM way, for it and for calibration runs that report it beside their
 * timings. */
#ifndef HS_KBENCH_H
#define HS_KBENCH_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

struct kern;

enum { KSTREAM_COPY, KSTREAM_TRIAD, KSTREAM_READ };

/* GB/s of copy (16 B an element), triad (24 B) and a read-only sum (8 B)
 * into gbs[KSTREAM_*], best of 5 passes on `threads` threads over arrays of
 * `bytes` each (0: four times the last-level cache). */
void kbench_stream(int threads, size_t bytes, double gbs[3]);

/* Peak FP32 multiply-add rate, GFLOP/s (2 per lane per FMA), of `threads`
 * threads running independent FMA chains in the widest vectors this CPU
 * has (AVX-512, AVX2, else 4 lanes): the machine's compute ceiling, measured
 * the way STREAM measures its memory ceiling. Best of 5. */
double kbench_flops(int threads);

/* Peak int8 dot-product rate, GOP/s (2 per byte product), of `threads`
 * threads running independent chains of the instruction kn's integer path
 * multiplies with (vpdpbusd in 512 or 256 bits, vpmaddubsw and a 16-bit
 * add); 0 where this build times none for kn (NEON, or no integer path).
 * kn is borrowed, a set this CPU runs (kern_find, kern_best). Best of 5. */
double kbench_int8(const struct kern *kn, int threads);
/* That instruction's name, or NULL where none is timed for kn. */
const char *kbench_int8_op(const struct kern *kn);

/* What "bench kernels" runs. */
struct kbench_opts {
	const struct kern *kern; /* the kernel set (borrowed) */
	int threads;             /* only this many threads; 0: 1 and 2 */
	int group;               /* W4A16 group: 32, 64 or 128 */
	int batch;               /* only this batch (1, 4, 16, 64 or 512); 0:
				    each */
	int rows, cols;          /* only this shape (rows x columns); 0: the
				    LLaMA-2-7B layer shapes */
	bool hot;                /* one copy of each matrix: weights hot in
				    the cache (side-by-side runs with
				    programs that time it so) */
	bool row_kernels;        /* W4A16 on the row kernels too (the
				    weights unpacked), beside its panels:
				    only a set with digits over panels
				    (dig_run) */
	bool quick;              /* one shape, batch 1, shorter timings */
	bool json;               /* one JSON object instead of a table */
};

/* Whether o can be run: a shape so small that twice the last-level
 * cache would take too many copies of it is refused (without o->hot), and
 * row_kernels for a set without panels for its W4A16 (dig_run). 0, or -1
 * with e's message saying what to do. */
int kbench_check(const struct kbench_opts *o, struct err *e);

/* W4A16, W8A16 and FP16 GEMV/GEMM at the LLaMA-2-7B layer shapes beside
 * STREAM in the same run, printed to stdout (the figures: cli's help).
 * o has passed kbench_check. */
void kbench_run(const struct kbench_opts *o);

#endif
