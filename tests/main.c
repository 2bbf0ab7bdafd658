/* main.c: the x86-64 test program: every suite, or the cases whose names
 * contain argv[1]. */
#include "harness.h"

extern const struct tcase base_tests[], eq_tests[], rng_tests[], jx_tests[], cfg_tests[],
	sketch_tests[], sim_tests[], formula_tests[], kernel_tests[], model_tests[],
	cli_tests[], sweep_tests[], calib_tests[], fuzz_regress_tests[],
	deploy_tests[], gpu_tests[], claims_tests[], gguf_tests[], cloud_tests[],
	energy_tests[], plan_tests[], faults_tests[], gcurve_tests[],
	gcheck_tests[], traces_tests[];

static const struct tcase *const suites[] = {
	base_tests, eq_tests, rng_tests, jx_tests, cfg_tests, sketch_tests, sim_tests,
	formula_tests, kernel_tests, model_tests, cli_tests, sweep_tests,
	calib_tests, fuzz_regress_tests, deploy_tests, gpu_tests, claims_tests,
	gguf_tests, cloud_tests, energy_tests, plan_tests, faults_tests,
	gcurve_tests, gcheck_tests, traces_tests,
};

int main(int argc, char **argv)
{
	return t_main(suites, sizeof(suites) / sizeof(suites[0]), argc, argv);
}
