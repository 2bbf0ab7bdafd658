/* test_cloud.c: the cloud at scale: model shapes (built-in, from a
 * config.json), GPUs (presets and given), tensor parallelism and its
 * all-reduces, the memory check, the consistency checks between the
 * target, the draft, their profiles and the GPU, and per-group SLOs. */
#include "harness.h"

#include "cfg.h"
#include "cost.h"
#include "report.h"
#include "shape.h"

#include <math.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Published totals, for the built-in shapes' weight counts: each model
 * card's "parameters" (Mixtral: Mistral AI's announcement, 46.7B total,
 * 12.9B a token; Qwen2.5-0.5B: the Hugging Face page's 494M, its card's
 * 0.49B being rounded further). Rounded as published, hence the
 * tolerance. */
static void builtin_params(void)
{
	static const struct { const char *name; double total, active; } m[] = {
		{ "llama2-7b", 6.74e9, 0 }, { "llama2-13b", 13.0e9, 0 },
		{ "llama2-70b", 68.98e9, 0 }, { "llama3-8b", 8.03e9, 0 },
		{ "llama3-70b", 70.6e9, 0 }, { "mistral-7b", 7.24e9, 0 },
		{ "qwen2.5-7b", 7.61e9, 0 }, { "mixtral-8x7b", 46.7e9, 12.9e9 },
		{ "smollm2-135m", 134.5e6, 0 }, { "smollm2-1.7b", 1.71e9, 0 },
		{ "llama3.1-8b", 8.03e9, 0 }, { "llama3.2-1b", 1.24e9, 0 },
		{ "qwen2.5-0.5b", 494e6, 0 }, { "qwen2.5-1.5b", 1.54e9, 0 },
	};

	for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
		const struct shape *s = shape_find(m[i].name);
		double p = shape_params(s), a = shape_active_params(s);

		CHECK_MSG(s && s->source, "%s: no source", m[i].name);
		CHECK_MSG(fabs(p / m[i].total - 1) < 0.006, "%s: %.4g weights, "
			  "published %.4g", m[i].name, p, m[i].total);
		if (m[i].active)
			CHECK_MSG(fabs(a / m[i].active - 1) < 0.006, "%s: %.4g a "
				  "token, published %.4g", m[i].name, a,
				  m[i].active);
		else
			CHECK(a == p && shape_params_read(s, 7) == p);
	}
}

/* A mixture of experts reads the experts its tokens touch: k of them for
 * one token, E(1 - (1 - k/E)^T) in expectation for T, all of them in the
 * limit. */
static void moe_reads(void)
{
	const struct shape *s = shape_find("mixtral-8x7b");
	double expert = 3.0 * s->dim * s->hidden * s->n_layers;
	double fixed = shape_params(s) - 8 * expert;

	CHECK_NEAR(shape_params_read(s, 1), fixed + 2 * expert, 1);
	CHECK_NEAR(shape_params_read(s, 3),
		   fixed + 8 * (1 - pow(0.75, 3)) * expert, 1);
	CHECK_NEAR(shape_params_read(s, 1e6), shape_params(s), 1);
	CHECK_NEAR(shape_active_params(s), fixed + 2 * expert, 1);
}

static const char *write_config_json(const char *dir, const char *text)
{
	static char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", t_tmpdir(), dir);
	mkdir(path, 0777);
	snprintf(path, sizeof(path), "%s/%s/config.json", t_tmpdir(), dir);
	f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
	return path;
}

#define L3 "\"hidden_size\": 4096, \"intermediate_size\": 14336, " \
	   "\"num_hidden_layers\": 32, \"num_attention_heads\": 32, " \
	   "\"num_key_value_heads\": 8, \"vocab_size\": 128256, "     \
	   "\"rope_theta\": 500000.0, \"torch_dtype\": \"bfloat16\""

/* A Hugging Face config.json gives its shape, named after its folder;
 * what is missing or unknown is refused naming the file and the key. */
static void shape_from_config_json(void)
{
	struct shape s;
	struct err e;

	CHECK_MSG(shape_load(&s, write_config_json("Meta-Llama-3-8B",
		"{\"model_type\": \"llama\", " L3 "}"), &e) == 0, "%s", e.msg);
	CHECK(!strcmp(s.name, "Meta-Llama-3-8B") && !s.tied);
	CHECK_NEAR(shape_params(&s), shape_params(shape_find("llama3-8b")), 0);
	/* the folder is enough */
	snprintf(e.msg, sizeof(e.msg), "%s/Meta-Llama-3-8B", t_tmpdir());
	CHECK(shape_load(&s, e.msg, &e) == 0 && s.n_kv_heads == 8);
	/* and named from inside it, the folder is found */
	{
		char here[4096], there[4096];

		snprintf(there, sizeof(there), "%s/Meta-Llama-3-8B", t_tmpdir());
		if (getcwd(here, sizeof(here)) && chdir(there) == 0) {
			int rc = shape_load(&s, "config.json", &e);

			CHECK(chdir(here) == 0);
			CHECK_MSG(rc == 0 && !strcmp(s.name, "Meta-Llama-3-8B"),
				  "%s", rc ? e.msg : s.name);
		}
	}
	/* a head width apart from dim / heads, and Qwen2's biases */
	CHECK(shape_load(&s, write_config_json("q", "{\"model_type\": "
		"\"qwen2\", \"head_dim\": 256, " L3 "}"), &e) == 0);
	CHECK(s.qkv_bias && s.head_dim == 256 &&
	      shape_kv_elems_per_token(&s) == 2.0 * 32 * 256 * 8);
	CHECK(shape_load(&s, write_config_json("mx", "{\"model_type\": "
		"\"mixtral\", \"num_local_experts\": 8, \"num_experts_per_tok\": "
		"2, " L3 "}"), &e) == 0);
	CHECK(s.n_experts == 8 && s.n_active == 2);
	CHECK(shape_load(&s, write_config_json("bad1", "{\"model_type\": "
		"\"llama\", \"hidden_size\": 4096, \"vocab_size\": 32000}"), &e) < 0);
	CHECK_MSG(strstr(e.msg, "bad1/config.json: /: missing required key "
			 "\"num_hidden_layers\""),
		  "%s", e.msg);
	CHECK(shape_load(&s, write_config_json("bad2", "{\"model_type\": "
		"\"gpt_neox\", " L3 "}"), &e) < 0);
	CHECK_MSG(strstr(e.msg, "bad2/config.json: /model_type: expected one "
			 "of \"llama\"") && strstr(e.msg, "\"gpt_neox\""), "%s",
		  e.msg);
	CHECK(shape_load(&s, write_config_json("bad3", "{\"model_type\": "
		"\"qwen2_moe\", \"num_experts\": 60, \"num_experts_per_tok\": 4, "
		"\"moe_intermediate_size\": 1408, \"mlp_only_layers\": [0], "
		L3 "}"), &e) < 0);
	CHECK_MSG(strstr(e.msg, "/mlp_only_layers: expected every layer a "
			 "mixture of experts"), "%s", e.msg);
	CHECK(shape_load(&s, "no-such-model", &e) < 0);
	CHECK_MSG(strstr(e.msg, "'no-such-model' is neither a model hybridspec "
			 "knows (llama2-7b, "), "%s", e.msg);
}

/* The committed stories260K acceptance profile, by its absolute path. */
static const char *stories_profile(void)
{
	static char path[4096];
	char cwd[2048];

	if (!getcwd(cwd, sizeof(cwd)))
		cwd[0] = '\0';
	snprintf(path, sizeof(path), "%s/results/calib/accept-stories260K-"
		 "w4a16-g128.json", cwd);
	return path;
}

/* A config: one group of protocol kind (or, starting with '{', the
 * protocol object), its extra keys (where "%s" is the stories260K
 * profile's path), and the cloud's keys. */
static int load(struct cfg *c, const char *kind, const char *group_fmt,
		const char *cloud, struct err *e)
{
	char text[8192], group[4096];

	snprintf(group, sizeof(group), group_fmt, stories_profile());
	snprintf(text, sizeof(text),
		 "{\"tenants\": [{\"name\": \"g\", \"count\": 2, \"protocol\": "
		 "%s%s%s, \"device\": {\"draft_base_s\": 0.01, "
		 "\"prefill_per_token_s\": 0.001}, \"workload\": {\"requests\": 2,"
		 " \"prompt_tokens\": 64, \"output_tokens\": 64}, \"wan\": "
		 "{\"rtt_s\": 0.05}%s%s}], \"cloud\": {%s}}",
		 kind[0] == '{' ? "" : "{\"kind\": \"", kind,
		 kind[0] == '{' ? "" : "\"}", group[0] ? ", " : "", group, cloud);
	return cfg_load(c, t_write("c.json", text), NULL, 0, e);
}

/* The cloud's config errors, each naming the file and the pointer. */
static void cloud_refuses(void)
{
	static const struct { const char *kind, *group, *cloud, *want; } k[] = {
		{ "sync", "", "\"gpu\": {\"name\": \"X1\", \"fp16_flops\": 1e14, "
		  "\"mem_bytes\": 4e10}",
		  "c.json: /cloud/gpu: missing required key \"mem_bw_Bps\"" },
		{ "sync", "", "\"model\": \"llama2-70b\"",
		  "c.json: /cloud/model: llama2-70b needs 138.0 GB of weights (2 "
		  "bytes a weight), 138.0 GB a GPU at tp 1, but one H100-SXM holds "
		  "80.0 GB; fix: /cloud/tp 2 (69.0 GB a GPU), or "
		  "/cloud/weight_bytes 1.15 or less at tp 1" },
		{ "sync", "\"acceptance\": {\"alpha\": 0.8}",
		  "\"kv_capacity_tokens\": 200000",
		  "c.json: /cloud/kv_capacity_tokens: 200000 tokens do not fit: "
		  "1 x 80.0 GB x 0.9 (gpu_memory_utilization), less 0.35 GB of "
		  "activations a GPU and 13.5 GB of weights, holds 110960 "
		  "tokens" },
		{ "sync", "\"acceptance\": {\"alpha\": 0.8}",
		  "\"kv_capacity_tokens\": 100",
		  "/cloud/kv_capacity_tokens: 100 tokens (6 blocks of 16) are "
		  "fewer than one request of group \"g\" needs (128 tokens" },
		{ "sync", "", "\"gpu\": {\"table\": {\"gpu\": \"L40S\", \"tokens\": "
		  "[1], \"ctx\": [1], \"seconds\": [[0.01]]}}",
		  "c.json: /cloud/gpu/table: the table was measured on \"L40S\", "
		  "but the GPU is H100-SXM" },
		{ "sync", "", "\"tp\": 2, \"gpu\": {\"table\": {\"gpu\": "
		  "\"H100-SXM\", \"tokens\": [1], \"ctx\": [1], \"seconds\": "
		  "[[0.01]]}}", "/cloud/gpu/table: a verify table is of one GPU" },
		{ "sync", "", "\"tp\": 2, \"gpu\": {\"name\": \"X2\", \"mem_bw_Bps\": "
		  "1e12, \"fp16_flops\": 1e14, \"mem_bytes\": 4e10}",
		  "c.json: /cloud/link: expected the link between the GPUs" },
		{ "sync", "", "\"link\": \"nvlink9\"",
		  "c.json: /cloud/link: expected one of \"nvlink3\"" },
		{ "sync", "\"acceptance\": {\"profile\": \"%s\"}",
		  "\"model\": \"llama2-13b\"",
		  "/tenants/0/acceptance/profile: measured with stories260K against "
		  "stories260K (vocabulary 512), but the group drafts with "
		  "llama2-13b against llama2-13b (vocabulary 32000); set "
		  "/tenants/0/acceptance/proxy to true" },
		{ "cloud_spec", "\"acceptance\": {\"alpha\": 0.8}", "",
		  "" },
		{ "{\"kind\": \"sync\", \"draft\": {\"model\": \"smollm2-135m\"}}",
		  "\"acceptance\": {\"alpha\": 0.8}", "",
		  "c.json: /tenants/0/protocol/draft/model: smollm2-135m has the "
		  "tokenizer smollm2 (vocabulary 49152), the target llama2-7b "
		  "(/cloud/model) llama2 (vocabulary 32000)" },
		/* padded vocabularies of one tokenizer: 151,936 rows against
		 * 152,064 */
		{ "{\"kind\": \"sync\", \"draft\": {\"model\": \"qwen2.5-0.5b\"}}",
		  "\"acceptance\": {\"alpha\": 0.8}", "\"model\": \"qwen2.5-7b\"",
		  "" },
		{ "{\"kind\": \"sync\", \"draft\": {\"model\": \"mistral-7b\"}}",
		  "\"acceptance\": {\"alpha\": 0.8}", "",
		  "mistral-7b has the tokenizer mistral (vocabulary 32000), the "
		  "target llama2-7b (/cloud/model) llama2 (vocabulary 32000)" },
		{ "{\"kind\": \"cloud_only\", \"draft\": {}}", "", "",
		  "c.json: /tenants/0/protocol/draft: expected no draft" },
	};

	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		struct cfg c;
		struct err e = { "" };
		int rc = load(&c, k[i].kind, k[i].group, k[i].cloud, &e);

		if (!k[i].want[0]) { /* the valid one among them */
			CHECK_MSG(rc == 0, "case %zu: %s", i, e.msg);
			if (rc == 0)
				cfg_release(&c);
			continue;
		}
		if (rc == 0) {
			CHECK_MSG(0, "case %zu (%s) was accepted", i, k[i].cloud);
			cfg_release(&c);
			continue;
		}
		CHECK_MSG(strstr(e.msg, k[i].want), "case %zu: \"%s\" lacks "
			  "\"%s\"", i, e.msg, k[i].want);
	}
}

/* The proxy flag lets a profile of other models stand in, and says so. */
static void proxy_accepted(void)
{
	struct cfg c;
	struct err e;

	CHECK_MSG(load(&c, "sync", "\"acceptance\": {\"profile\": \"%s\", "
		       "\"proxy\": true}", "\"model\": \"llama2-13b\"", &e) == 0,
		  "%s", e.msg);
	CHECK(c.groups[0].accept.proxy &&
	      !strcmp(c.groups[0].accept.target, "stories260K"));
	cfg_release(&c);
}

/* A given GPU's figures are the roofline's; a preset's figures may be
 * replaced one by one. */
static void gpu_given(void)
{
	struct cfg c;
	struct cost k;
	struct err e;

	CHECK_MSG(load(&c, "sync", "\"acceptance\": {\"alpha\": 0.8}",
		       "\"gpu\": {\"name\": \"lab-gpu\", \"mem_bw_Bps\": 1e12, "
		       "\"fp16_flops\": 2e14, \"mem_bytes\": 48e9, "
		       "\"power_max_w\": 300, \"usd_per_hour\": 1.5}", &e) == 0,
		  "%s", e.msg);
	cost_init(&k, &c.cloud);
	CHECK(!strcmp(k.gpu, "lab-gpu") && k.peak_bw_Bps == 1e12 &&
	      k.peak_flops == 2e14 && c.cloud.gpu.spec.usd_per_hour == 1.5 &&
	      !c.cloud.gpu.preset && !c.cloud.gpu.spec.source);
	/* default KV: (0.9 x 48 GB - activations - 2 x 6.74e9) / 512 KiB a
	 * token, whole blocks of 16 */
	CHECK(c.cloud.kv_capacity_tokens ==
	      16 * (long long)floor((0.9 * 48e9 - c.cloud.activation_bytes -
				     2 * shape_params(&c.cloud.model)) /
				    (2 * shape_kv_elems_per_token(&c.cloud.model)) /
				    16));
	cfg_release(&c);
	CHECK(load(&c, "sync", "\"acceptance\": {\"alpha\": 0.8}",
		   "\"gpu\": {\"preset\": \"H200\", \"mem_bw_Bps\": 4e12}",
		   &e) == 0);
	CHECK(!strcmp(c.cloud.gpu.spec.name, "H200") &&
	      c.cloud.gpu.spec.mem_bw_Bps == 4e12 &&
	      c.cloud.gpu.spec.mem_bytes == 141e9);
	cfg_release(&c);
}

/* Tensor parallelism: the roofline (a config asks for it) on a tp-th of the bytes and FLOPs, and
 * two ring all-reduces a layer, against the hand computation. */
static void tp_cost(void)
{
	struct cfg c1, c4;
	struct cost k1, k4;
	struct err e;
	struct cost_batch b = { 16, 4, 4 * 512.0, 16 * 520.0, 16 };
	double by, fl, t1, t4, ar;

	CHECK_MSG(load(&c1, "sync", "\"acceptance\": {\"alpha\": 0.8}",
		       "\"model\": \"llama2-70b\", \"tp\": 2, "
		       "\"gpu\": {\"pricing\": \"roofline\"}", &e) == 0, "%s",
		  e.msg);
	CHECK_MSG(load(&c4, "sync", "\"acceptance\": {\"alpha\": 0.8}",
		       "\"model\": \"llama2-70b\", \"tp\": 4, "
		       "\"gpu\": {\"pricing\": \"roofline\"}", &e) == 0, "%s",
		  e.msg);
	cost_init(&k1, &c1.cloud);
	cost_init(&k4, &c4.cloud);
	CHECK(!strcmp(k4.link.name, "nvlink4"));
	/* one all-reduce of 16 x 8192 FP16 activations over 4 GPUs on NVLink
	 * 4: 6.6 us + 6 steps x 0.6 us + 3/2 x 262144 B / 450 GB/s */
	ar = 6.6e-6 + 6 * 0.6e-6 + 1.5 * 262144 / 450e9;
	CHECK_NEAR(cost_allreduce_s(&k4, 16), 2 * 80 * ar, 1e-12);
	t4 = cost_iter_s(&k4, &b, &by, &fl);
	CHECK_NEAR(t4, fmax(by / (4 * 0.8 * 3.35e12), fl / (4 * 0.6 * 989.4e12)) +
			       0.0005 + 2 * 80 * ar, 1e-12);
	t1 = cost_iter_s(&k1, &b, NULL, NULL);
	CHECK(t4 < t1); /* memory-bound at 16 tokens: more GPUs, less time */
	/* KV capacity doubles with the GPUs beside the same weights */
	CHECK(c4.cloud.kv_capacity_tokens > 2 * c1.cloud.kv_capacity_tokens);
	cfg_release(&c1);
	cfg_release(&c4);
}

/* Number formats: FP8 weights are 1 byte and run at the FP8 rate where
 * the GPU has one (H100: 1,979 TFLOPS), at FP16 where not (A100); FP8 KV
 * halves a token's bytes and so about doubles the pool; 4-bit weights are
 * 4.25 bits and run at FP16. */
static void dtypes(void)
{
	struct cfg h8, a8, k8, k16, w4;
	struct cost c;
	struct err e;
	char cloud[1400], cwd[1024];

	CHECK_MSG(load(&h8, "cloud_only", "", "\"weight_dtype\": \"fp8\", "
		       "\"gpu\": {\"pricing\": \"roofline\"}", &e) == 0, "%s",
		  e.msg);
	cost_init(&c, &h8.cloud);
	CHECK(h8.cloud.weight_bytes == 1 && c.bytes_per_weight == 1 &&
	      c.peak_flops == 1978.9e12);
	CHECK_MSG(load(&a8, "cloud_only", "", "\"weight_dtype\": \"fp8\", "
		       "\"gpu\": {\"preset\": \"A100-80G\", \"pricing\": "
		       "\"roofline\"}", &e) == 0, "%s", e.msg);
	cost_init(&c, &a8.cloud);
	CHECK(c.peak_flops == 312e12);
	CHECK_MSG(load(&k8, "cloud_only", "", "\"kv_dtype\": \"fp8\"", &e) == 0,
		  "%s", e.msg);
	CHECK_MSG(load(&k16, "cloud_only", "", "\"replicas\": 1", &e) == 0, "%s",
		  e.msg);
	cost_init(&c, &k8.cloud);
	CHECK(c.kv_bytes_per_tok == shape_kv_elems_per_token(&k8.cloud.model));
	CHECK(k8.cloud.kv_capacity_tokens >= 2 * k16.cloud.kv_capacity_tokens - 16 &&
	      k8.cloud.kv_capacity_tokens <= 2 * k16.cloud.kv_capacity_tokens + 16);
	/* the committed tables price FP16 weights, not other formats */
	CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
	snprintf(cloud, sizeof(cloud), "\"gpu\": {\"tables\": "
		 "\"%s/results/calib/gpu\"}", cwd);
	cost_init(&c, &k16.cloud);
	cfg_release(&k16);
	CHECK_MSG(load(&k16, "cloud_only", "", cloud, &e) == 0, "%s", e.msg);
	cost_init(&c, &k16.cloud);
	CHECK(c.ops.measured);
	snprintf(cloud, sizeof(cloud), "\"weight_dtype\": \"int4\", \"gpu\": "
		 "{\"tables\": \"%s/results/calib/gpu\"}", cwd);
	CHECK_MSG(load(&w4, "cloud_only", "", cloud, &e) == 0, "%s", e.msg);
	cost_init(&c, &w4.cloud);
	CHECK(w4.cloud.weight_bytes == 0.53125 && c.peak_flops == 989.4e12 &&
	      !c.ops.measured);
	cfg_release(&h8);
	cfg_release(&a8);
	cfg_release(&k8);
	cfg_release(&k16);
	cfg_release(&w4);
}

/* A group's own SLO judges its requests; the others keep the config's. */
static void group_slo(void)
{
	static const char text[] =
		"{\"slo\": {\"ttft_s\": 100, \"tpot_s\": 10},"
		" \"tenants\": [{\"name\": \"loose\", \"count\": 2,"
		"  \"protocol\": {\"kind\": \"cloud_only\"},"
		"  \"workload\": {\"requests\": 2, \"prompt_tokens\": 16,"
		"   \"output_tokens\": 32}, \"wan\": {\"rtt_s\": 0.05}},"
		" {\"name\": \"tight\", \"count\": 2, \"slo\": {\"tpot_s\": 1e-6},"
		"  \"protocol\": {\"kind\": \"cloud_only\"},"
		"  \"workload\": {\"requests\": 2, \"prompt_tokens\": 16,"
		"   \"output_tokens\": 32}, \"wan\": {\"rtt_s\": 0.05}}]}";
	struct cfg c;
	struct err e;
	json_t *sum;

	CHECK_MSG(cfg_load(&c, t_write("slo.json", text), NULL, 0, &e) == 0,
		  "%s", e.msg);
	CHECK(c.groups[1].slo.ttft_s == 100 && c.groups[1].slo.tpot_s == 1e-6 &&
	      c.groups[0].slo.tpot_s == 10);
	sum = rep_simulate(&c, &e);
	CHECK_MSG(sum != NULL, "%s", e.msg);
	if (sum) {
		json_t *g = json_object_get(sum, "groups");

		CHECK(json_number_value(json_object_get(json_array_get(g, 0),
				"slo_attainment")) == 1);
		CHECK(json_number_value(json_object_get(json_array_get(g, 1),
				"slo_attainment")) == 0);
		json_decref(sum);
	}
	cfg_release(&c);
}

const struct tcase cloud_tests[] = {
	{ "cloud: built-in shapes count their models' published weights",
	  builtin_params },
	{ "cloud: a mixture of experts reads the experts its batch touches",
	  moe_reads },
	{ "cloud: shapes from a config.json, and its errors",
	  shape_from_config_json },
	{ "cloud: bad GPUs, tp, memory, tables and profiles are refused",
	  cloud_refuses },
	{ "cloud: a proxy acceptance profile is taken, and marked",
	  proxy_accepted },
	{ "cloud: a given GPU's figures make the roofline", gpu_given },
	{ "cloud: tensor parallelism's roofline and all-reduces", tp_cost },
	{ "cloud: FP8 and 4-bit weights and KV: bytes and FLOP rates", dtypes },
	{ "cloud: a group's own SLO judges its requests", group_slo },
	{ 0 },
};
