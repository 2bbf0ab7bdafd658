/* fz_cfg.c: the simulation config reader (cfg_load, sim/cfg.h), with the
 * files a config may name beside it: edge.json, accept.json (and a.bits),
 * table.json, arrivals.csv and samples.txt. */
#include "fz.h"

#include "cfg.h"

static const char fz_cfg_edge[] =
	"{\"kind\": \"edge\", \"device\": \"x\", \"derived\": false,\n"
	" \"model\": {\"name\": \"llama2-7b\", \"dim\": 4096, \"hidden\": 11008,"
	" \"layers\": 32, \"heads\": 32, \"kv_heads\": 32, \"vocab\": 32000,"
	" \"weights\": \"synthetic\"},\n"
	" \"quant\": \"w4a16-g128-sym\", \"threads\": 2, \"stream_gbs\": 20,"
	" \"peak_gflops\": 340,\n"
	" \"draft\": {\"ctx\": [16, 64], \"seconds\": [0.37, 0.39]},\n"
	" \"prefill\": {\"tokens\": [16, 32], \"seconds\": [7.3, 15.7]},\n"
	" \"fit\": {\"draft_base_s\": 0.367, \"draft_per_ctx_s\": 0.0001,"
	" \"prefill_base_s\": 0, \"prefill_per_token_s\": 0.47,"
	" \"draft_max_rel_residual\": 0.09, \"prefill_max_rel_residual\": 0.04},\n"
	" \"provenance\": {\"machine\": \"m\", \"date\": \"d\", \"commit\": \"c\","
	" \"command\": \"x\"}}\n";

static const char fz_cfg_accept[] =
	"{\"kind\": \"acceptance\", \"alpha_greedy\": 0.75,"
	" \"alpha_stochastic\": 0.8,\n"
	" \"mean_accepted_per_gamma\": {\"1\": 1.7, \"2\": 2.3},\n"
	" \"bits\": \"a.bits\",\n"
	" \"provenance\": {\"machine\": \"m\", \"date\": \"d\", \"commit\": \"c\","
	" \"command\": \"x\"}}\n";

static const char fz_cfg_table[] =
	"{\"kind\": \"verify\", \"gpu\": \"H100-SXM\", \"model\": \"llama2-7b\",\n"
	" \"tokens\": [1, 16, 256], \"ctx\": [128, 4096],\n"
	" \"seconds\": [[0.0055, 0.0056], [0.0056, 0.0060], [0.009, 0.02]]}\n";

static const char fz_cfg_arrivals[] =
	"arrival_s,prompt_tokens,output_tokens\n0,64,32\n0.5,128,16\n";

static const char fz_cfg_samples[] = "# output tokens\n10\n20 \n\t40\n";

static int fz_cfg(const uint8_t *data, size_t size)
{
	struct cfg c;
	struct err e;
	const char *path;

	fz_put_text("edge.json", fz_cfg_edge);
	fz_put_text("accept.json", fz_cfg_accept);
	fz_put_text("a.bits", fz_bits);
	fz_put_text("table.json", fz_cfg_table);
	fz_put_text("arrivals.csv", fz_cfg_arrivals);
	fz_put_text("samples.txt", fz_cfg_samples);
	path = fz_put("cfg.json", data, size);
	if (cfg_load(&c, path, NULL, 0, &e) < 0)
		return -1;
	free(cfg_resolved(&c));
	cfg_release(&c);
	return 0;
}

FZ_TARGET(fz_cfg)
