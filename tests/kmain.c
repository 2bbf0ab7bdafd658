/* kmain.c: the kernel tests alone, for the aarch64 build under qemu and
 * the avx-vnni set's EVEX build (Makefile: ARM_TEST, EVEX_TEST). */
#include "harness.h"

extern const struct tcase kernel_tests[];

static const struct tcase *const suites[] = { kernel_tests };

int main(int argc, char **argv)
{
	return t_main(suites, 1, argc, argv);
}
