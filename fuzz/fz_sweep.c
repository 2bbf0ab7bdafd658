/* fz_sweep.c: the sweep reader (sweep_load, study/sweep.h) over a small base
 * config named small.json or base.json beside it; then what a sweep
 * derives from the file: the resolved sweep, the overrides and folder of
 * the first runs, the metrics' column names. */
#include "fz.h"

#include "sweep.h"

/* tests/data/small.json: a valid simulation config, for targets that need
 * a base. */
static const char fz_small_config[] =
	"{\"name\": \"small\", \"seed\": 7,\n"
	" \"protocol\": {\"kind\": \"async\", \"gamma\": 4, \"window\": 3},\n"
	" \"tenants\": [\n"
	"  {\"name\": \"phones\", \"count\": 3,\n"
	"   \"device\": {\"draft_base_s\": 0.012, \"draft_per_ctx_s\": 2e-6,\n"
	"              \"prefill_per_token_s\": 0.0008},\n"
	"   \"workload\": {\"requests\": 2, \"prompt_tokens\": 64,\n"
	"                \"output_tokens\": {\"dist\": \"uniform\", \"min\": 32,"
	" \"max\": 96},\n"
	"                \"think_s\": {\"dist\": \"exponential\", \"mean\": 2}},\n"
	"   \"acceptance\": {\"model\": \"iid\", \"alpha\": 0.8},\n"
	"   \"wan\": {\"rtt_s\": {\"dist\": \"lognormal\", \"mean\": 0.06,"
	" \"sd\": 0.015}}},\n"
	"  {\"name\": \"laptops\", \"protocol\": {\"kind\": \"sync\","
	" \"gamma\": 6},\n"
	"   \"device\": {\"draft_base_s\": 0.004, \"prefill_per_token_s\":"
	" 0.0002},\n"
	"   \"workload\": {\"requests\": 1, \"prompt_tokens\": 128,"
	" \"output_tokens\": 64},\n"
	"   \"acceptance\": {\"model\": \"markov\", \"p_after_accept\": 0.9,\n"
	"                  \"p_after_reject\": 0.5},\n"
	"   \"wan\": {\"rtt_s\": 0.03, \"up_bps\": 50e6}}],\n"
	" \"cloud\": {\"replicas\": 2, \"gpu\": {\"preset\": \"H100-SXM\"}}}\n";

static int fz_sweep(const uint8_t *data, size_t size)
{
	struct sweep s;
	struct err e;
	char col[JX_PTR_MAX];
	const char *path;

	fz_put_text("small.json", fz_small_config);
	fz_put_text("base.json", fz_small_config);
	path = fz_put("sweep.json", data, size);
	if (sweep_load(&s, path, &e) < 0)
		return -1;
	free(sweep_resolved(&s));
	for (size_t p = 0; p < s.n_points && p < 8; p++)
		for (size_t i = 0; i < s.n_seeds && i < 2; i++) {
			size_t n;
			char **sets = sweep_sets(&s, p, s.seeds[i], &n);

			sweep_sets_free(sets, n);
			free(sweep_run_dir(&s, "out", p, i));
		}
	for (size_t m = 0; m < s.n_metrics; m++)
		sweep_column(col, s.metrics[m]);
	sweep_release(&s);
	return 0;
}

FZ_TARGET(fz_sweep)
