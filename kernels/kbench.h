/* kbench.h: memory bandwidth measured the STREAM way, for the kernel
 * benchmark and for calibration runs that report it beside their timings. */
#ifndef HS_KBENCH_H
#define HS_KBENCH_H

#include <stddef.h>

enum { KSTREAM_COPY, KSTREAM_TRIAD, KSTREAM_READ };

/* GB/s of copy (16 B an element), triad (24 B) and a read-only sum (8 B)
 * into gbs[KSTREAM_*], best of 5 passes on `threads` threads over arrays of
 * `bytes` each (0: four times the last-level cache). */
void kstream_measure(int threads, size_t bytes, double gbs[3]);

/* Peak FP32 multiply-add rate, GFLOP/s (2 per lane per FMA), of `threads`
 * threads running independent FMA chains in the widest vectors this CPU
 * has (AVX-512, AVX2, else 4 lanes): the machine's compute ceiling, measured
 * the way STREAM measures its memory ceiling. Best of 5. */
double kflops_measure(int threads);

#endif
