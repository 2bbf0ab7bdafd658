/* test_calib.c: calibration profiles: what calib writes the simulator
 * reads; every kind of bad profile is refused by field; the fit, the
 * derivation and the roofline table do what they say; the quick fidelity
 * check runs. */
#define _DEFAULT_SOURCE /* realpath, setenv */
#include "harness.h"

#include "ccpu.h"
#include "cgpu.h"
#include "derive.h"
#include "devlib.h"
#include "dfit.h"
#include "cfg.h"
#include "cost.h"
#include "jx.h"
#include "kbench.h"
#include "kern.h"
#include "prof.h"
#include "prov.h"
#include "shape.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

/* A small measured profile of stories260K W4A16 (saved to name). */
static json_t *small_profile(const char *name, const char **path)
{
	/* prefills 8x apart, each the median of 3 runs: a loaded machine
	 * cannot invert their order (one run each once gave the 128-token
	 * prefill no more time than the 16-token one, beside a compile) */
	static const int ctx[] = { 16, 32, 64, 0 }, pre[] = { 16, 128, 0 };
	struct calib_cpu_opts o = { .ctx = ctx, .prefill = pre, .reps = 3,
				     .stream_bytes = 16u << 20 };
	struct calib_model c;
	struct err e;
	json_t *prov = json_pack("{s:s,s:s,s:s,s:s}", "machine", "test",
				 "date", "2026-11-29", "commit", "x",
				 "command", "test"), *p, *v;

	if (calib_model_init(&c, "stories260K", NULL, "w4a16", 1, 0, &e) < 0) {
		CHECK_MSG(0, "%s", e.msg);
		json_decref(prov);
		return NULL;
	}
	p = calib_cpu(&c, &o, prov, &v);
	CHECK(v == NULL);
	json_object_set_new(p, "device", json_string("test machine"));
	calib_model_release(&c);
	json_decref(prov);
	*path = t_write(name, "");
	CHECK(jx_save(*path, p, &e) == 0);
	return p;
}

static void test_profile_roundtrip(void)
{
	const char *path, *cfgp;
	json_t *p = small_profile("edge.json", &path);
	struct prof_edge pe;
	struct cfg c;
	struct err e;
	char text[2048];

	if (!p)
		return;
	CHECK_MSG(prof_edge_load(path, &pe, &e) == 0, "%s", e.msg);
	CHECK(!strcmp(pe.model, "stories260K") && pe.vocab == 512 &&
	      !pe.derived);
	CHECK(pe.draft_base_s > 0 && pe.prefill_per_token_s > 0);
	/* the config takes the fit as the device's costs */
	snprintf(text, sizeof(text),
		 "{\"tenants\": [{\"protocol\": {\"kind\": \"edge_only\"}, "
		 "\"device\": {\"profile\": \"edge.json\"}, \"wan\": {\"rtt_s\": "
		 "0.05}, \"workload\": {\"prompt_tokens\": 8, \"output_tokens\": "
		 "8}}]}");
	cfgp = t_write("c.json", text);
	CHECK_MSG(cfg_load(&c, cfgp, NULL, 0, &e) == 0, "%s", e.msg);
	CHECK(c.groups[0].device.draft_base_s == pe.draft_base_s);
	CHECK(c.groups[0].device.draft_per_ctx_s == pe.draft_per_ctx_s);
	CHECK(c.groups[0].device.prefill_per_token_s == pe.prefill_per_token_s);
	cfg_release(&c);
	/* a speculating group needs a target with the draft's tokenizer */
	snprintf(text, sizeof(text),
		 "{\"tenants\": [{\"protocol\": {\"kind\": \"sync\"}, "
		 "\"device\": {\"profile\": \"edge.json\"}, \"wan\": {\"rtt_s\": "
		 "0.05}, \"acceptance\": {\"alpha\": 0.8}, \"workload\": "
		 "{\"prompt_tokens\": 8, \"output_tokens\": 8}}]}");
	cfgp = t_write("c2.json", text);
	CHECK(cfg_load(&c, cfgp, NULL, 0, &e) < 0);
	CHECK_MSG(strstr(e.msg, "/tenants/0/protocol/draft/model: stories260K "
			 "(the model of /tenants/0/device/profile) has the tokenizer "
			 "(not known) (vocabulary 512)"),
		  "%s", e.msg);
	json_decref(p);
}

/* p with the change made by edit, saved; the reader must refuse it with a
 * message holding want. */
static void refused(const json_t *p, const char *ptr, const char *val,
		    const char *want)
{
	json_t *q = json_deep_copy(p);
	const char *path = t_write("bad.json", "");
	struct prof_edge pe;
	struct err e;

	if (val) {
		CHECK(jx_set(q, ptr, val, NULL, &e) == 0);
	} else { /* delete the key */
		char parent[256];
		const char *slash = strrchr(ptr, '/');
		json_t *o;

		snprintf(parent, sizeof(parent), "%.*s", (int)(slash - ptr), ptr);
		o = *parent ? json_object_get(q, parent + 1) : q;
		CHECK(o && json_object_del(o, slash + 1) == 0);
	}
	CHECK(jx_save(path, q, &e) == 0);
	CHECK_MSG(prof_edge_load(path, &pe, &e) < 0, "%s %s accepted", ptr,
		  val ? val : "(deleted)");
	CHECK_MSG(strstr(e.msg, want) != NULL, "%s: '%s' lacks '%s'", ptr,
		  e.msg, want);
	json_decref(q);
}

static void test_profile_bad(void)
{
	const char *path;
	json_t *p = small_profile("edge.json", &path);

	if (!p)
		return;
	refused(p, "/fit/draft_base_s", NULL, "missing required key \"draft_base_s\"");
	refused(p, "/provenance/commit", NULL, "\"commit\"");
	refused(p, "/draft/ctx/1", "8", "/draft/ctx/1: expected a number > 0, "
		"greater than the one before");
	refused(p, "/prefill/seconds/1", "1e-9", "/prefill/seconds/1: "
		"expected a number > 0, not less than the one before");
	refused(p, "/draft/seconds/0", "-0.001", "/draft/seconds/0: expected "
		"a number > 0");
	refused(p, "/fit/prefill_base_s", "-1", "/fit/prefill_base_s");
	refused(p, "/model/dim", "65", "/model/dim: expected 64, the dim of "
		"stories260K, got 65");
	refused(p, "/model/vocab", "32000", "/model/vocab");
	refused(p, "/derived", "true", "/derivation");
	refused(p, "/draft/seconds/-", "0.001", "/draft/seconds: expected 3 "
		"times");
	refused(p, "/kind", "\"gpu\"", "/kind");
	refused(p, "/decode_activations", "\"bf16\"", "/decode_activations");
	json_decref(p);
}

static void test_fit(void)
{
	double x[] = { 16, 32, 64, 128, 256 }, t[5], a, b;

	for (int i = 0; i < 5; i++)
		t[i] = 1e-3 + 2e-6 * x[i];
	CHECK(calib_fit(x, t, 5, &a, &b) < 1e-9);
	CHECK_NEAR(a, 1e-3, 1e-12);
	CHECK_NEAR(b, 2e-6, 1e-14);
	/* falling times: no negative slope, a weighted mean */
	for (int i = 0; i < 5; i++)
		t[i] = 1e-3 - 1e-7 * x[i];
	calib_fit(x, t, 5, &a, &b);
	CHECK(b == 0 && a > t[4] && a < t[0]);
	/* through the origin when the intercept would be negative */
	for (int i = 0; i < 5; i++)
		t[i] = -1e-4 + 1e-5 * x[i];
	calib_fit(x, t, 5, &a, &b);
	CHECK(a == 0 && b > 0);
}

/* the "sources" of a test device: one for each constant it may give */
#define TEST_SOURCES "\"sources\": {\"peak_gbs\": \"t\", " \
	"\"fp32_gflops\": \"t\", \"int8_gops\": \"t\", \"cores\": \"t\"}"

/* A device file in dir/NAME.json of class cls: 4 threads, DRAM peak_gbs,
 * FP32 gf GFLOP/s, int8 4 gf GOP/s, then the members in extra */
static void device_write(const char *dir, const char *name, const char *cls,
			 double peak_gbs, double gf, const char *extra)
{
	char path[1024], text[2048];

	snprintf(path, sizeof(path), "%s/%s.json", dir, name);
	snprintf(text, sizeof(text),
		 "{\"kind\": \"device\", \"name\": \"%s\", \"class\": \"%s\", "
		 "\"threads\": 4, \"peak_gbs\": %g, \"fp32_gflops\": %g, "
		 "\"int8_gops\": %g, " TEST_SOURCES ", %s}",
		 name, cls, peak_gbs, gf, 4 * gf, extra);
	CHECK(t_write(path + strlen(t_tmpdir()) + 1, text) != NULL);
}

/* A phone's device file for test_derive in dir/NAME.json: DRAM peak_gbs,
 * FP32 200 GFLOP/s, int8 800 GOP/s on 4 threads */
static void device_file(const char *dir, const char *name, double peak_gbs,
			const char *extra)
{
	device_write(dir, name, "phone", peak_gbs, 200, extra);
}

/* figures a device streaming half its DRAM peak would publish: decode of
 * 1e9 weights in 5e8 bytes at 0.5 peak_gbs / 0.5 GB, prefill at 0.2 of
 * its int8 peak (80 tokens/s); and a GPU figure the fit must not take */
static void device_with_figures(const char *dir, const char *name,
				double peak_gbs)
{
	char figs[1024];

	snprintf(figs, sizeof(figs), "\"published\": [{\"model\": \"m\", "
		 "\"params\": 1e9, \"weight_bytes\": 5e8, \"quant\": \"Q4_0\", "
		 "\"backend\": \"cpu\", \"threads\": 4, \"test\": \"tg\", "
		 "\"tokens_per_s\": %g, \"source\": \"x\"}, {\"model\": \"m\", "
		 "\"params\": 1e9, \"weight_bytes\": 5e8, \"quant\": \"Q4_0\", "
		 "\"backend\": \"cpu\", \"threads\": 4, \"test\": \"pp\", "
		 "\"tokens_per_s\": 80, \"source\": \"x\"}, {\"model\": \"g\", "
		 "\"params\": 1e9, \"weight_bytes\": 5e8, \"quant\": \"Q4_0\", "
		 "\"backend\": \"opencl\", \"threads\": 0, \"test\": \"tg\", "
		 "\"tokens_per_s\": 900, \"source\": \"y\"}]",
		 0.5 * peak_gbs / 0.5);
	device_file(dir, name, peak_gbs, figs);
}

/* The derivation: a library whose figures a device model explains exactly
 * (half the DRAM peak in decode, a fifth of the int8 peak in prefill); a
 * device's level is that model's, its held-out band is near zero on its
 * own figures, a device without figures takes its class's band, another
 * model keeps the level per byte; and the errors of bad files. */
static void test_derive(void)
{
	const char *path, *out = t_write("phone.json", "");
	json_t *p = small_profile("edge.json", &path), *d;
	char dir[1024];
	struct calib_device a, b;
	struct prof_edge m, pe;
	struct err e;
	const char *acts;
	double bytes, step;

	if (!p)
		return;
	snprintf(dir, sizeof(dir), "%s/devices", t_tmpdir());
	mkdir(dir, 0755);
	device_with_figures(dir, "dev-a", 40);
	device_with_figures(dir, "dev-c", 60);
	device_with_figures(dir, "dev-d", 20);
	device_file(dir, "dev-b", 30, "\"why_not\": \"none found\"");
	CHECK_MSG(calib_device_load(&a, "dev-a", dir, &e) == 0, "%s", e.msg);
	CHECK_MSG(calib_device_load(&b, "dev-b", dir, &e) == 0, "%s", e.msg);
	CHECK(a.nfig == 3 && a.fig[0].used && !a.fig[2].used);
	d = calib_derive(p, path, &a, NULL, 0, dir, json_object_get(p, "provenance"),
			 &e);
	CHECK_MSG(d != NULL, "%s", e.msg);
	if (!d)
		goto out;
	/* the step at context 64 streams the model's bytes at half of 40 GB/s
	 * (the fit's grid is 2.8% a step) */
	bytes = json_number_value(jx_at(d, "/derivation/model/bytes_read"));
	CHECK(jx_save(out, d, &e) == 0);
	CHECK(prof_edge_load(path, &m, &e) == 0);
	CHECK_MSG(prof_edge_load(out, &pe, &e) == 0, "%s", e.msg);
	CHECK(pe.derived && !strcmp(pe.device, "dev-a"));
	/* the measured forward's step activations are not the device's */
	CHECK(json_object_get(p, "decode_activations") &&
	      !json_object_get(d, "decode_activations"));
	step = pe.draft_base_s + 64 * pe.draft_per_ctx_s;
	CHECK_MSG(fabs(step / (bytes / 20e9) - 1) < 0.03, "%g s against %g",
		  step, bytes / 20e9);
	/* prefill at a fifth of the peak its activations ran on */
	acts = json_string_value(json_object_get(p, "prefill_activations"));
	CHECK_MSG(fabs(json_number_value(jx_at(d, "/derivation/predicted/"
		  "prefill_tokens_per_s")) * 2 *
		  json_number_value(jx_at(d, "/derivation/model/weights_read")) /
		  (acts && !strcmp(acts, "int8") ? 800e9 : 200e9) / 0.2 - 1) <
		  0.03, "prefill off");
	/* held out on its own figures, the others explain it */
	CHECK(json_integer_value(jx_at(d, "/derivation/held_out/decode/"
				       "figures")) == 1);
	CHECK(fabs(json_number_value(jx_at(d, "/derivation/held_out/decode/"
					   "highest"))) < 0.03);
	/* its line: the device, the predicted rates and their bands */
	{
		char *said = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&said, &len);

		calib_derive_say(d, f);
		fclose(f);
		CHECK_MSG(said && !strncmp(said, "calib: dev-a, ", 14) &&
			  strstr(said, ": decode ") &&
			  strstr(said, " tokens/s (held out ") &&
			  strstr(said, ", 1 figure), prefill ") &&
			  said[len - 1] == '\n', "%s", said ? said : "");
		free(said);
	}
	/* derived twice: refused */
	CHECK(calib_derive(d, out, &b, NULL, 0, dir, NULL, &e) == NULL &&
	      strstr(e.msg, "itself derived"));
	json_decref(d);
	/* no figures: its class's devices' held-out band, 3 figures */
	d = calib_derive(p, path, &b, NULL, 0, dir, NULL, &e);
	CHECK_MSG(d != NULL, "%s", e.msg);
	if (d) {
		CHECK(json_integer_value(jx_at(d, "/derivation/held_out/decode/"
					       "figures")) == 3);
		CHECK(strstr(json_string_value(jx_at(d, "/derivation/held_out/"
				"decode/from")), "no figure of its own"));
		json_decref(d);
	}
	/* another model: the same bytes a second, its own KV a position */
	d = calib_derive(p, path, &a, shape_find("smollm2-135m"), 0, dir, NULL, &e);
	CHECK_MSG(d != NULL, "%s", e.msg);
	if (d) {
		const struct shape *s = shape_find("smollm2-135m");

		bytes = json_number_value(jx_at(d, "/derivation/model/bytes_read"));
		CHECK(!strcmp(json_string_value(jx_at(d, "/model/name")),
			      "smollm2-135m"));
		step = json_number_value(jx_at(d, "/fit/draft_base_s")) +
		       64 * json_number_value(jx_at(d, "/fit/draft_per_ctx_s"));
		CHECK(fabs(step / (bytes / 20e9) - 1) < 0.03);
		if (pe.draft_per_ctx_s > 0)
			CHECK_NEAR(json_number_value(jx_at(d, "/fit/draft_per_ctx_s")) /
				   pe.draft_per_ctx_s, shape_kv_elems_per_token(s) /
				   shape_kv_elems_per_token(shape_find("stories260K")),
				   1e-9);
		json_decref(d);
	}
	/* bad files name what is wrong */
	calib_device_release(&b);
	CHECK(calib_device_load(&b, "pager", dir, &e) < 0 &&
	      strstr(e.msg, "unknown device 'pager'") &&
	      strstr(e.msg, "dev-a, dev-b"));
	device_file(dir, "bad-bw", -1, "\"why_not\": \"-\"");
	CHECK(calib_device_load(&b, "bad-bw", dir, &e) < 0);
	device_file(dir, "no-why", 40, "\"published\": []");
	CHECK(calib_device_load(&b, "no-why", dir, &e) < 0 &&
	      strstr(e.msg, "/why_not"));
	device_file(dir, "bad-fig", 40, "\"published\": [{\"model\": \"m\"}]");
	CHECK(calib_device_load(&b, "bad-fig", dir, &e) < 0 &&
	      strstr(e.msg, "/published/0"));
	/* a constant without its source: the power's is "power" */
	device_file(dir, "no-src", 40, "\"power_busy_w\": 5, \"why_not\": \"-\"");
	CHECK_MSG(calib_device_load(&b, "no-src", dir, &e) < 0 &&
		  strstr(e.msg, "no-src.json: /sources/power: expected a string: "
			 "where power_busy_w comes from"), "%s", e.msg);
out:
	calib_device_release(&a);
	calib_device_release(&b);
	json_decref(p);
}

static void test_gpu_roofline(void)
{
	json_t *prov = json_pack("{s:s,s:s,s:s,s:s}", "machine", "m", "date",
				 "d", "commit", "c", "command", "x");
	json_t *t = calib_gpu_roofline("H100-SXM", "llama2-7b", prov, NULL);
	struct cfg_cloud cl;
	struct cost roof, tab;
	struct cost_batch b = { 64, 13, 13 * 1024.0, 64 * 1024.0, 64 };
	struct err e;

	cfg_cloud_default(&cl, "H100-SXM", shape_find("llama2-7b"));
	CHECK(json_is_false(json_object_get(t, "calibrated")));
	cost_init(&roof, &cl);
	CHECK_MSG(vtab_parse(&cl.gpu.vtab, t, "gpu.json", "llama2-7b", &e) == 0,
		  "%s", e.msg);
	cost_init(&tab, &cl);
	/* on the grid (64 tokens in 13 blocks, context 1024) the table is
	 * the roofline */
	CHECK_NEAR(cost_iter_s(&tab, &b, NULL, NULL),
		   cost_iter_s(&roof, &b, NULL, NULL), 1e-12);
	vtab_release(&cl.gpu.vtab);
	/* a table for another model is refused */
	CHECK(vtab_parse(&cl.gpu.vtab, t, "gpu.json", "llama2-13b", &e) < 0 &&
	      strstr(e.msg, "/model") && cl.gpu.vtab.nt == 0);
	json_decref(t);
	json_decref(prov);
}

/* A verify table's prefill grid (validate measures one): a batch's rows
 * without logits are priced from it, the rest from the verify grid; a
 * table without one prices every row as verification; a bad grid is
 * refused by its pointer. */
static void test_prefill_grid(void)
{
	const char *text =
		"{\"kind\": \"verify\", \"gpu\": \"cpu-1t\", \"model\": \"llama2-7b\", "
		"\"tokens\": [1, 64], \"ctx\": [8, 128], "
		"\"seconds\": [[1e-4, 1.2e-4], [6.4e-3, 7.2e-3]], "
		"\"prefill_seconds\": [[0.8e-4, 1e-4], [4.0e-3, 4.8e-3]]}";
	json_t *doc = json_loads(text, 0, NULL);
	struct cost_batch all = { 64, 1, 8, 8 * 64.0, 64 };
	struct cost_batch none = { 64, 1, 8, 8 * 64.0, 0 };
	struct cost_batch half = { 64, 2, 256, 128 * 64.0, 32 };
	struct vtab t;
	struct err e;

	CHECK_MSG(vtab_parse(&t, doc, "v.json", "llama2-7b", &e) == 0, "%s", e.msg);
	CHECK_NEAR(cost_table_batch_s(&t, &all), 6.4e-3, 1e-12);
	CHECK_NEAR(cost_table_batch_s(&t, &none), 4.0e-3, 1e-12);
	/* half the rows at context 128: (7.2 + 4.8) / 2 ms */
	CHECK_NEAR(cost_table_batch_s(&t, &half), 6.0e-3, 1e-12);
	vtab_release(&t);
	json_object_del(doc, "prefill_seconds");
	CHECK(vtab_parse(&t, doc, "v.json", "llama2-7b", &e) == 0 && !t.pre);
	CHECK_NEAR(cost_table_batch_s(&t, &none), 6.4e-3, 1e-12);
	vtab_release(&t);
	json_object_set_new(doc, "prefill_seconds", json_pack("[[f,f],[f,f]]",
		1e-4, 1e-4, 0.5e-4, 1e-4));
	CHECK(vtab_parse(&t, doc, "v.json", "llama2-7b", &e) < 0 &&
	      strstr(e.msg, "/prefill_seconds/1/0"));
	json_object_set_new(doc, "prefill_seconds", json_pack("[[f,f]]", 1e-4,
							      1e-4));
	CHECK(vtab_parse(&t, doc, "v.json", "llama2-7b", &e) < 0 &&
	      strstr(e.msg, "/prefill_seconds:"));
	json_decref(doc);
}

/* a noisy grid: at context 16, 2 tokens time below 1 and 4 below both */
static double noisy_s(void *arg, int tokens, int ctx)
{
	(void)arg;
	if (ctx == 16)
		return tokens == 1 ? 3e-3 : tokens == 2 ? 2e-3 : 1e-3;
	return 1e-3 * tokens;
}

/* A measured verify table is one the simulator reads: a time below the
 * one for fewer tokens at its context is raised to it, and the method
 * says how many were (calib check's quick table tripped on 1 and 2
 * tokens of stories260K timing alike) */
static void test_verify_raised(void)
{
	static const int tokens[] = { 1, 2, 4, 0 }, ctxs[] = { 16, 32, 0 };
	json_t *prov = json_pack("{s:s}", "command", "x");
	json_t *t = calib_verify_table("this CPU", "llama2-7b", 4096, tokens,
				       ctxs, noisy_s, NULL, "m", prov, false);
	struct vtab v;
	struct err e;

	CHECK_MSG(vtab_parse(&v, t, "v.json", "llama2-7b", &e) == 0, "%s", e.msg);
	CHECK(v.nt == 3 && v.nc == 2);
	for (int i = 0; i < 3; i++)
		CHECK_NEAR(v.sec[i * 2], 3e-3, 0);
	CHECK_NEAR(v.sec[2 * 2 + 1], 4e-3, 0);
	CHECK(!strcmp(json_string_value(json_object_get(t, "method")),
		      "m; 2 times raised to the time for fewer tokens at the "
		      "same context"));
	vtab_release(&v);
	json_decref(t);
	json_decref(prov);
}

/* a config of one sync group, target and draft by name, acceptance as
 * given, saved; its path */
static const char *published_config(const char *target, const char *draft,
				    const char *accept)
{
	char text[2048];

	snprintf(text, sizeof(text), "{\"cloud\": {\"model\": \"%s\"}, "
		 "\"tenants\": [{\"protocol\": {\"kind\": \"sync\", \"draft\": "
		 "{\"model\": \"%s\"}}, \"device\": {\"draft_base_s\": 0.01, "
		 "\"prefill_per_token_s\": 0.001}, \"wan\": {\"rtt_s\": 0.05}, "
		 "\"workload\": {\"prompt_tokens\": 8, \"output_tokens\": 8}, "
		 "\"acceptance\": %s}]}", target, draft, accept);
	return t_write("pub.json", text);
}

/* A published figure by name: the iid model at its alpha, the pair it was
 * measured with checked like a profile's (a stand-in only when declared a
 * proxy), an unknown name listing the library, a bad file named. */
static void test_published(void)
{
	char dir[1024], path[1200];
	struct cfg c;
	struct err e;

	snprintf(dir, sizeof(dir), "%s/published", t_tmpdir());
	mkdir(dir, 0755);
	setenv("HYBRIDSPEC_ACCEPTANCE", dir, 1);
	snprintf(path, sizeof(path), "%s/pair.json", dir + strlen(t_tmpdir()) + 1);
	t_write(path, "{\"kind\": \"published-acceptance\", \"name\": \"pair\", "
		"\"target\": \"Llama-3.1-8B\", \"draft\": \"Llama-3.2-1B\", "
		"\"target_shape\": \"llama3.1-8b\", \"draft_shape\": "
		"\"llama3.2-1b\", \"alpha\": 0.7, \"alpha_from\": \"as published\", "
		"\"source\": \"a thread\", \"quote\": \"70%\"}");
	snprintf(path, sizeof(path), "%s/other.json", dir + strlen(t_tmpdir()) + 1);
	t_write(path, "{\"kind\": \"published-acceptance\", \"name\": \"other\", "
		"\"target\": \"T5-XXL\", \"draft\": \"T5-small\", \"alpha\": 0.75, "
		"\"alpha_from\": \"as published\", \"source\": \"a paper\", "
		"\"quote\": \"0.75\"}");
	snprintf(path, sizeof(path), "%s/bad.json", dir + strlen(t_tmpdir()) + 1);
	t_write(path, "{\"kind\": \"published-acceptance\", \"alpha\": 1.5}");
	CHECK_MSG(cfg_load(&c, published_config("llama3.1-8b", "llama3.2-1b",
		  "{\"published\": \"pair\"}"), NULL, 0, &e) == 0, "%s", e.msg);
	CHECK(c.groups[0].accept.model == ACCEPT_IID &&
	      c.groups[0].accept.alpha == 0.7 &&
	      strstr(c.groups[0].accept.source, "published pair"));
	cfg_release(&c);
	/* another pair: refused, then taken as a declared proxy */
	CHECK(cfg_load(&c, published_config("llama2-7b", "llama2-7b",
		       "{\"published\": \"other\"}"), NULL, 0, &e) < 0 &&
	      strstr(e.msg, "/tenants/0/acceptance/published: measured with "
		     "T5-small against T5-XXL") && strstr(e.msg, "proxy"));
	CHECK_MSG(cfg_load(&c, published_config("llama2-7b", "llama2-7b",
		  "{\"published\": \"other\", \"proxy\": true}"), NULL, 0, &e) == 0,
		  "%s", e.msg);
	CHECK(c.groups[0].accept.alpha == 0.75);
	cfg_release(&c);
	CHECK(cfg_load(&c, published_config("llama2-7b", "llama2-7b",
		       "{\"published\": \"none\"}"), NULL, 0, &e) < 0 &&
	      strstr(e.msg, "no published acceptance figure 'none'") &&
	      strstr(e.msg, "bad, other, pair"));
	CHECK(cfg_load(&c, published_config("llama2-7b", "llama2-7b",
		       "{\"published\": \"bad\"}"), NULL, 0, &e) < 0 &&
	      strstr(e.msg, "bad.json: /alpha"));
	unsetenv("HYBRIDSPEC_ACCEPTANCE");
}

static void test_accept_profile(void)
{
	char out[8192], args[2048];
	const char *dir = t_tmpdir(), *cfgp;
	struct prof_accept pa;
	struct cfg c;
	struct err e;
	char path[1024];
	json_t *doc;
	int rc;

	if (!t_need_models())
		return;
	t_absolute_dirs();
	/* a device for a text: refused, not read without end (/dev/zero had
	 * been read as one line until memory ran out) */
	CHECK_MSG(t_run("eval ppl --model stories260K --text /dev/zero", out,
			sizeof(out)) == 2 &&
		  strstr(out, "/dev/zero: a device, not a text file"), "%s", out);
	/* a bad format among the drafts: refused before any is measured */
	snprintf(args, sizeof(args), "calib accept --target stories260K "
		 "--drafts w4a4-g32,w4a5 --text %s/TinyStories-valid-excerpt.txt "
		 "--gamma 2 --prompts 2 -o %s", mload_data_dir(), dir);
	rc = t_run(args, out, sizeof(out));
	snprintf(path, sizeof(path), "%s/accept-stories260K-w4a4-g32.json", dir);
	CHECK_MSG(rc == 2 && strstr(out, "--drafts: expected") &&
		  strstr(out, "got \"w4a5\"") && access(path, F_OK) != 0,
		  "%s", out);
	/* the target in a format of its own (f16), its name apart in the
	 * draft's and the profile's names, the profile's naming the target's
	 * format (an f32 target's had the same name); -o's folders made */
	snprintf(args, sizeof(args), "calib accept --target stories260K:f16 "
		 "--drafts w4a4-g32 --text %s/TinyStories-valid-excerpt.txt "
		 "--gamma 2 --prompts 2 -o %s/made/here", mload_data_dir(), dir);
	rc = t_run(args, out, sizeof(out));
	snprintf(path, sizeof(path), "%s/made/here/accept-stories260K.f16-"
		 "w4a4-g32.json", dir);
	CHECK_MSG(rc == 0, "%s", out);
	if (prof_accept_load(path, &pa, &e) != 0) {
		CHECK_MSG(0, "%s", e.msg);
		return;
	}
	CHECK(pa.max_gamma == 2 && pa.alpha > 0.2 && pa.alpha < 0.9);
	if ((doc = jx_load(path, &e))) {
		const char *tq = json_string_value(json_object_get(doc, "target_quant")),
			   *dr = json_string_value(json_object_get(doc, "draft"));

		CHECK_MSG(tq && !strcmp(tq, "f16") && dr &&
			  !strcmp(dr, "stories260K:w4a4-g32"), "%s", path);
		json_decref(doc);
	} else {
		CHECK_MSG(0, "%s", e.msg);
	}
	cfgp = t_write("a.json", "");
	doc = json_pack("{s:{s:s},s:[{s:{s:s},s:{s:f,s:f},s:{s:f},s:{s:i,s:i},"
			"s:{s:s}}]}", "cloud", "model", "stories260K",
			"tenants", "protocol", "kind", "sync",
			"device", "draft_base_s", 0.01, "prefill_per_token_s",
			0.001, "wan", "rtt_s", 0.05, "workload", "prompt_tokens",
			8, "output_tokens", 8, "acceptance", "profile", path);
	CHECK(jx_save(cfgp, doc, &e) == 0);
	CHECK_MSG(cfg_load(&c, cfgp, NULL, 0, &e) == 0, "%s", e.msg);
	CHECK(c.groups[0].accept.model == ACCEPT_TRACE &&
	      !strcmp(c.groups[0].accept.trace, pa.bits));
	cfg_release(&c);
	/* iid with the profile's alpha */
	json_object_set_new(json_object_get(json_array_get(json_object_get(
		doc, "tenants"), 0), "acceptance"), "model", json_string("iid"));
	CHECK(jx_save(cfgp, doc, &e) == 0);
	CHECK_MSG(cfg_load(&c, cfgp, NULL, 0, &e) == 0, "%s", e.msg);
	CHECK(c.groups[0].accept.alpha == pa.alpha);
	cfg_release(&c);
	json_decref(doc);
	/* an alpha that is not the trace's mean is refused */
	doc = jx_load(path, &e);
	json_object_set_new(doc, "alpha_greedy", json_real(pa.alpha + 0.01));
	CHECK(jx_save(path, doc, &e) == 0);
	CHECK(prof_accept_load(path, &pa, &e) < 0 &&
	      strstr(e.msg, "/alpha_greedy: expected"));
	json_decref(doc);
}

/* Whether object o (or NULL) holds the string want at key */
static bool str_at(const json_t *o, const char *key, const char *want)
{
	const char *v = json_string_value(json_object_get(o, key));

	return v && !strcmp(v, want);
}

/* calib cpu and eval ppl --kernel: the forward runs on the named set, and
 * the profile says so (the portable set has no integer path: its blocks
 * and draft steps take FP16, and calib and eval say int8 was asked for
 * and not had); the best set's draft steps take int8 where asked and it
 * has the path. The fit refuses a prefill no slower for more tokens:
 * prompts 4x apart, each the median of 3 runs, keep one stall on a shared
 * host (a sanitiser's run is ~0.1 s) from flattening it. */
static void test_cpu_kernel(void)
{
	char out[8192], args[2048];
	const char *path = t_write("ref.json", "");
	json_t *p;

	if (!t_need_models())
		return;
	t_absolute_dirs();
	snprintf(args, sizeof(args), "calib cpu --model stories260K --ctx 16,32 "
		 "--prefill 16,64 --reps 3 --kernel ref --decode-acts int8 -o %s",
		 path);
	CHECK_MSG(t_run(args, out, sizeof(out)) == 0 &&
		  strstr(out, "--decode-acts int8: the draft steps took fp16"),
		  "%s", out);
	p = json_load_file(path, 0, NULL);
	CHECK(str_at(p, "kernel", "ref") && str_at(p, "prefill_activations", "fp16") &&
	      str_at(p, "decode_activations", "fp16"));
	json_decref(p);
	snprintf(args, sizeof(args), "calib cpu --model stories260K --ctx 16,32 "
		 "--prefill 16,64 --reps 3 --quant w4a16 --decode-acts int8 "
		 "--overwrite -o %s", path);
	CHECK_MSG(t_run(args, out, sizeof(out)) == 0, "%s", out);
	p = json_load_file(path, 0, NULL);
	CHECK(str_at(p, "decode_activations",
		     kern_best()->a8_run ? "int8" : "fp16"));
	json_decref(p);
	snprintf(args, sizeof(args), "eval ppl --model stories260K --quant w4a16 "
		 "--text %s/TinyStories-valid-excerpt.txt --windows 1 "
		 "--block-acts int8 --kernel ref", mload_data_dir());
	CHECK_MSG(t_run(args, out, sizeof(out)) == 0 &&
		  strstr(out, "activations fp16") &&
		  strstr(out, "this kernel set has no integer path"), "%s", out);
}

/* The check's verdicts are timing, so they are not asserted here (under a
 * sanitiser the edge's forward is slower than its profile): what is asserted
 * is that every check ran, that each "pass" is its error against its bound,
 * and that the exit status says whether one missed. */
static void test_check_quick(void)
{
	char out[8192];
	json_error_t je;
	json_t *doc, *c;
	size_t i;
	int rc, missed = 0;

	t_absolute_dirs();
	rc = t_run("calib check --quick --json", out, sizeof(out));

	CHECK_MSG(rc == 0 || rc == 1, "%s", out);
	CHECK_MSG(strstr(out, "{\"checks\": [{\"name\": \"edge stories260K") &&
		  strstr(out, "\"name\": \"verify stories260K"), "%s", out);
	doc = json_loads(out, 0, &je);
	CHECK_MSG(doc && json_array_size(json_object_get(doc, "checks")) == 7,
		  "%s", out);
	json_array_foreach(json_object_get(doc, "checks"), i, c) {
		double pred = json_number_value(json_object_get(c, "predicted_s"));
		double meas = json_number_value(json_object_get(c, "measured_s"));
		double rel = json_number_value(json_object_get(c, "rel_error"));
		double bound = json_number_value(json_object_get(c, "bound"));
		bool pass = json_is_true(json_object_get(c, "pass"));

		CHECK_MSG(pred > 0 && meas > 0 && bound == 0.5, "%s", out);
		CHECK_MSG(fabs(rel - (pred - meas) / meas) < 1e-5, "%s", out);
		CHECK_MSG(pass == (fabs(rel) <= bound), "%s", out);
		missed += !pass;
	}
	CHECK_MSG((rc == 1) == (missed > 0), "%s", out);
	json_decref(doc);
}

/* A library made from the device model itself (beta 0.5, kappa 0.1, eta
 * 0.2; dfit.h): each device held out is predicted within the fit's grid
 * (2.8% a step), and a device whose figures break the model is found
 * wrong without pulling the others' fit. */
static void synth_device(const char *name, double gbs, double gops,
			 double scale)
{
	char text[2048];
	double p7 = 6.74e9, w7 = 3.79e9, p1 = 1.1e9, w1 = 1.17e9;
	double c = gops * 1e9;
	double tg7 = 1 / fmax(w7 / (0.5 * gbs * 1e9), 2 * p7 / (0.1 * c));
	double tg1 = 1 / fmax(w1 / (0.5 * gbs * 1e9), 2 * p1 / (0.1 * c));
	double pp7 = 0.2 * c / (2 * p7);

	snprintf(text, sizeof(text),
		 "{\"kind\": \"device\", \"name\": \"%s\", \"class\": "
		 "\"board\", \"threads\": 4, \"peak_gbs\": %g, "
		 "\"fp32_gflops\": %g, \"int8_gops\": %g, " TEST_SOURCES ", "
		 "\"published\": ["
		 "{\"model\": \"7B\", \"params\": %g, \"weight_bytes\": %g, "
		 "\"quant\": \"Q4_0\", \"backend\": \"cpu\", \"threads\": 4, "
		 "\"test\": \"tg\", \"tokens_per_s\": %.9g, \"source\": \"s\"},"
		 "{\"model\": \"1B\", \"params\": %g, \"weight_bytes\": %g, "
		 "\"quant\": \"Q8_0\", \"backend\": \"cpu\", \"threads\": 4, "
		 "\"test\": \"tg\", \"tokens_per_s\": %.9g, \"source\": \"s\"},"
		 "{\"model\": \"7B\", \"params\": %g, \"weight_bytes\": %g, "
		 "\"quant\": \"Q4_0\", \"backend\": \"cpu\", \"threads\": 4, "
		 "\"test\": \"pp\", \"tokens_per_s\": %.9g, \"source\": \"s\"}]}",
		 name, gbs, gops / 4, gops, p7, w7, scale * tg7, p1, w1,
		 scale * tg1, p7, w7, scale * pp7);
	snprintf(text + 1500, 64, "%s.json", name);
	t_write(text + 1500, text);
}

static void test_blind(void)
{
	static const struct { const char *name; double gbs, gops; } devs[] = {
		{ "a", 17, 600 }, { "b", 34, 400 }, { "c", 68, 2000 },
		{ "d", 100, 300 }, { "e", 51, 1200 },
	};
	struct err e;
	char *out = NULL;
	size_t len = 0;
	FILE *f;

	for (size_t i = 0; i < 5; i++)
		synth_device(devs[i].name, devs[i].gbs, devs[i].gops, 1);
	f = open_memstream(&out, &len);
	CHECK_MSG(dfit_blind_print(t_tmpdir(), f, &e) == 0, "%s", e.msg);
	fclose(f);
	{
		static const char head[] = "decode: 10 figures, held-out "
					   "|error| median ";
		const char *dline = out ? strstr(out, head) : NULL;
		double med = 99, worst = 99;

		CHECK_MSG(dline && sscanf(dline + sizeof(head) - 1, "%lf%%, worst %lf%%", &med,
					  &worst) == 2 && worst < 2.8 &&
			  strstr(out, "prefill: 5 figures, held-out |error| "
				 "median 0.0%"), "%s", out);
	}
	free(out);
	/* the listing: a line a device, its peaks and its used figures, the
	 * names as wide as the longest ("device", here) */
	out = NULL;
	f = open_memstream(&out, &len);
	CHECK_MSG(dfit_library_print(t_tmpdir(), f, &e) == 0, "%s", e.msg);
	fclose(f);
	CHECK_MSG(out && strstr(out, "\nc      board         4"
				     "    68.0    500.0   2000.0   2/2   1/1  \n"),
		  "%s", out);
	free(out);
	/* the device with figures twice the model's: its own error is about
	 * -50%, and the others stay within the grid */
	synth_device("e", 51, 1200, 2);
	out = NULL;
	f = open_memstream(&out, &len);
	CHECK_MSG(dfit_blind_print(t_tmpdir(), f, &e) == 0, "%s", e.msg);
	fclose(f);
	CHECK_MSG(out && strstr(out, "\ne      board   7B") &&
		  strstr(out, "-50%") && strstr(out, "worst 50.0%"), "%s", out);
	/* and by class: the boards' line, none for a class without figures */
	CHECK_MSG(out && strstr(out, "\n  prefill, board: 5 figures, median "
				     "0.0%, worst 50.0%\n") &&
		  !strstr(out, "phone"), "%s", out);
	free(out);
}

/* A board of 4 threads in dir for test_split: DRAM gbs, FP32 gf (int8 4
 * times it), its cores ("cores" member, or ""), publishing a decode that
 * streams half the DRAM peak at share of the pace, and a prefill at eta of
 * its int8 peak on kernel family kernel */
static void split_device(const char *dir, const char *name, double gbs,
			 double gf, const char *cores, double share, double eta,
			 const char *kernel)
{
	char extra[1536];

	snprintf(extra, sizeof(extra),
		 "%s\"published\": [{\"model\": \"m\", \"params\": 1e9, "
		 "\"weight_bytes\": 5e8, \"quant\": \"Q4_0\", \"backend\": "
		 "\"cpu\", \"threads\": 4, \"test\": \"tg\", "
		 "\"tokens_per_s\": %.9g, \"source\": \"s\"}, {\"model\": "
		 "\"m\", \"params\": 1e9, \"weight_bytes\": 5e8, \"quant\": "
		 "\"Q4_0\", \"backend\": \"cpu\", \"threads\": 4, \"test\": "
		 "\"pp\", \"kernel\": \"%s\", \"tokens_per_s\": %.9g, "
		 "\"source\": \"s\"}]", cores, share * 0.5 * gbs / 0.5, kernel,
		 eta * 4 * gf / 2);
	device_write(dir, name, "board", gbs, gf, extra);
}

/* A library of boards in the case's folder sub (its path into dir, 1024
 * bytes): a and b prefill on the generic kernels at 0.2 of their peak, r1
 * and r2 on the repacked ones at 0.4; all decode at half the DRAM peak */
static void two_families(char *dir, const char *sub)
{
	snprintf(dir, 1024, "%s/%s", t_tmpdir(), sub);
	mkdir(dir, 0755);
	split_device(dir, "a", 40, 800, "", 1, 0.2, "generic");
	split_device(dir, "b", 60, 1200, "", 1, 0.2, "generic");
	split_device(dir, "r1", 50, 1000, "", 1, 0.4, "repack");
	split_device(dir, "r2", 30, 600, "", 1, 0.4, "repack");
}

/* The blind table of dir; the decode and prefill worst |error| in % */
static char *blind_worst(const char *dir, double *dec, double *pre)
{
	struct err e;
	char *out = NULL;
	size_t len = 0;
	const char *l;
	FILE *f = open_memstream(&out, &len);

	CHECK_MSG(dfit_blind_print(dir, f, &e) == 0, "%s", e.msg);
	fclose(f);
	*dec = *pre = 999;
	if (out && (l = strstr(out, "decode: ")) && (l = strstr(l, "worst ")))
		*dec = atof(l + 6);
	if (out && (l = strstr(out, "prefill: ")) && (l = strstr(l, "worst ")))
		*pre = atof(l + 6);
	return out;
}

/* The split share and the kernel families (dfit.h): a board whose two slow
 * cores set a decode's pace is predicted from the others' fit once its
 * cores are listed (and 150% off without them); repacked prefills get
 * their own eta; bad cores and families are refused by pointer. */
static void test_split(void)
{
	static const char *const slow = "\"cores\": [{\"n\": 2, \"ghz\": 3, "
		"\"flops_cycle\": 64}, {\"n\": 2, \"ghz\": 1.5, "
		"\"flops_cycle\": 32}], ";
	char dir[1024], *out;
	struct calib_device d;
	struct err e;
	double dec, pre;

	two_families(dir, "split");
	split_device(dir, "c", 20, 400, "", 1, 0.2, "generic");
	split_device(dir, "r3", 35, 700, "", 1, 0.4, "repack");
	/* 2 x 192 + 2 x 48 GFLOP/s: the slowest's pace is 4 x 48 / 480 */
	split_device(dir, "h", 20, 480, slow, 0.4, 0.2, "generic");
	out = blind_worst(dir, &dec, &pre);
	CHECK_MSG(dec < 3 && pre < 1 && strstr(out, "(repack, its class)") &&
		  strstr(out, "(generic, its class)"), "%s", out);
	free(out);
	split_device(dir, "h", 20, 480, "", 0.4, 0.2, "generic");
	out = blind_worst(dir, &dec, &pre);
	CHECK_MSG(dec > 100 && pre < 1, "%s", out);
	free(out);
	/* bad cores, a bad family */
	split_device(dir, "h", 20, 400, slow, 1, 0.2, "generic");
	CHECK(calib_device_load(&d, "h", dir, &e) < 0 &&
	      strstr(e.msg, "/cores: expected cores summing to fp32_gflops"));
	split_device(dir, "h", 20, 480, "\"cores\": [{\"n\": 2, \"ghz\": 1.5, "
		     "\"flops_cycle\": 32}, {\"n\": 2, \"ghz\": 3, "
		     "\"flops_cycle\": 64}], ", 1, 0.2, "generic");
	CHECK(calib_device_load(&d, "h", dir, &e) < 0 &&
	      strstr(e.msg, "/cores/1: expected cores no faster"));
	split_device(dir, "h", 20, 120, "\"cores\": [{\"n\": 3, \"ghz\": 10, "
		     "\"flops_cycle\": 4}], ", 1, 0.2, "generic");
	CHECK(calib_device_load(&d, "h", dir, &e) < 0 &&
	      strstr(e.msg, "/cores: expected as many cores"));
	split_device(dir, "h", 20, 480, "", 1, 0.2, "magic");
	CHECK(calib_device_load(&d, "h", dir, &e) < 0 &&
	      strstr(e.msg, "/published/1") && strstr(e.msg, "kernel"));
	CHECK(calib_kernel_find("repack", &e) == 1 &&
	      calib_kernel_find("magic", &e) < 0 &&
	      strstr(e.msg, "unknown kernel family 'magic'"));
}

/* The library's own errors, and a prefill band in the kernel family
 * derived for: two devices of one name are refused, naming both files; a
 * library left with no figure of a kind to fit on is an error, and the
 * blind table prints nothing then; a phone without prefill figures takes
 * the band of its family's figures where there are some, and says when
 * there are none. */
static void test_library(void)
{
	char dir[1024], *out = NULL;
	const char *path;
	json_t *p = small_profile("edge.json", &path), *d;
	struct calib_device a, r;
	struct err e;
	size_t len = 0;
	FILE *f;

	if (!p)
		return;
	two_families(dir, "lib");
	device_write(dir, "phone", "phone", 30, 500, "\"why_not\": \"-\"");
	CHECK_MSG(calib_device_load(&r, "phone", dir, &e) == 0, "%s", e.msg);
	for (int k = 0; k < 2; k++) {
		d = calib_derive(p, path, &r, NULL, k, dir, NULL, &e);
		CHECK_MSG(d != NULL, "%s", e.msg);
		if (!d)
			continue;
		CHECK_MSG(json_integer_value(jx_at(d, "/derivation/held_out/"
						   "prefill/figures")) == 2 &&
			  strstr(json_string_value(jx_at(d, "/derivation/held_out/"
				 "prefill/from")), k ? "in its kernel family "
				 "(repack): every device's" : "own: every device's"),
			  "%s", json_string_value(jx_at(d, "/derivation/"
				"held_out/prefill/from")));
		/* the kernel set is the measuring machine's, not the device's */
		CHECK(json_is_string(json_object_get(p, "kernel")) &&
		      !json_object_get(d, "kernel") &&
		      json_equal(jx_at(d, "/derivation/measured_kernel"),
				 json_object_get(p, "kernel")));
		json_decref(d);
	}
	/* no repack figure left: the band says so and takes every family's */
	remove(strcat(strcpy((char[1100]){ 0 }, dir), "/r1.json"));
	remove(strcat(strcpy((char[1100]){ 0 }, dir), "/r2.json"));
	d = calib_derive(p, path, &r, NULL, 1, dir, NULL, &e);
	CHECK_MSG(d && strstr(json_string_value(jx_at(d, "/derivation/held_out/"
		  "prefill/from")), "(none in its kernel family, repack)"),
		  "%s", d ? "" : e.msg);
	json_decref(d);
	/* a device alone with its figures: nothing to fit it on */
	remove(strcat(strcpy((char[1100]){ 0 }, dir), "/b.json"));
	CHECK_MSG(calib_device_load(&a, "a", dir, &e) == 0, "%s", e.msg);
	d = calib_derive(p, path, &a, NULL, 0, dir, NULL, &e);
	CHECK_MSG(!d && strstr(e.msg, "no used decode figure to fit the "
			       "device model on without a"), "%s",
		  d ? "derived" : e.msg);
	json_decref(d);
	calib_device_release(&a);
	f = open_memstream(&out, &len);
	CHECK(dfit_blind_print(dir, f, &e) < 0 &&
	      strstr(e.msg, "no used decode figure"));
	fclose(f);
	CHECK_MSG(len == 0, "%s", out);
	free(out);
	/* two files, one name */
	split_device(dir, "b", 60, 1200, "", 1, 0.2, "generic");
	{
		char text[4096], *q;
		json_t *b = jx_load(strcat(strcpy((char[1100]){ 0 }, dir),
					   "/b.json"), &e);

		json_object_set_new(b, "name", json_string("a"));
		q = json_dumps(b, JSON_COMPACT);
		snprintf(text, sizeof(text), "%s", q);
		free(q);
		json_decref(b);
		t_write("lib/twin.json", text);
	}
	d = calib_derive(p, path, &r, NULL, 0, dir, NULL, &e);
	CHECK_MSG(!d && strstr(e.msg, "a.json and ") &&
		  strstr(e.msg, "twin.json: two devices named \"a\""), "%s",
		  d ? "derived" : e.msg);
	json_decref(d);
	/* a device's name and its reason are text; the idle draw wants the
	 * busy one */
	device_write(dir, "nameless", "phone", 30, 500, "\"why_not\": \"\"");
	CHECK_MSG(calib_device_load(&a, "nameless", dir, &e) < 0 &&
		  strstr(e.msg, "/why_not: expected a non-empty string"), "%s",
		  e.msg);
	device_write(dir, "idle", "phone", 30, 500, "\"power_idle_w\": 1, "
		     "\"why_not\": \"-\"");
	CHECK_MSG(calib_device_load(&a, "idle", dir, &e) < 0 &&
		  strstr(e.msg, "/power_idle_w: expected power_busy_w beside it"),
		  "%s", e.msg);
	calib_device_release(&r);
	json_decref(p);
}

/* The int8 peak (a profile's int8_gops) is the kernel set's own
 * instruction's: none for the reference, which has no such instruction;
 * avx2's vpmaddubsw where it runs, on a CPU that may have vpdpbusd too;
 * and on x86 a chain for every set with an integer path */
static void int8_peak_is_the_sets(void)
{
	const struct kern *avx2 = kern_find("avx2");

	CHECK(!kbench_int8_op(kern_find("ref")) &&
	      kbench_int8(kern_find("ref"), 1) == 0);
	if (avx2)
		CHECK(kbench_int8_op(avx2) &&
		      !strcmp(kbench_int8_op(avx2), "vpmaddubsw") &&
		      kbench_int8(avx2, 1) > 0);
#if defined(__x86_64__)
	for (const char *const *nm = kern_available(); *nm; nm++) {
		const struct kern *kn = kern_find(*nm);

		CHECK_MSG(!kn->a8_run || kbench_int8_op(kn), "%s: an integer "
			  "path, no int8 chain in kbench.c", *nm);
	}
#endif
}

const struct tcase calib_tests[] = {
	{ "calib: the int8 peak is the kernel set's own", int8_peak_is_the_sets },
	{ "calib: the device library's errors, and a prefill band in its "
	  "kernel family", test_library },
	{ "calib: the device model's split share and kernel families",
	  test_split },
	{ "calib: a measured profile is what the config's device gets",
	  test_profile_roundtrip },
	{ "calib: bad profiles are refused, naming the field", test_profile_bad },
	{ "calib: the fit (relative least squares, no negative terms)",
	  test_fit },
	{ "calib: derived profiles: the device model's level, held-out bands, "
	  "another model, bad device files",
	  test_derive },
	{ "calib: the uncalibrated GPU table is the roofline", test_gpu_roofline },
	{ "calib: a verify table's prefill grid prices rows without logits",
	  test_prefill_grid },
	{ "calib: a measured verify table is raised where it dips, and says so",
	  test_verify_raised },
	{ "calib: acceptance profiles drive the trace or iid model",
	  test_accept_profile },
	{ "calib: the quick fidelity check: every verdict is its error against its bound",
	  test_check_quick },
	{ "calib: the device model held out device by device", test_blind },
	{ "calib: calib cpu and eval ppl --kernel run the forward on that set",
	  test_cpu_kernel },
	{ "calib: published acceptance figures by name", test_published },
	{ 0 },
};
