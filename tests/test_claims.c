/* test_claims.c: the verdicts on the paper's claims (study/claims.h), each
 * on small fixture results where it holds, where it does not, and with its
 * inputs missing. */
#include "harness.h"

#include "claims.h"
#include "cmap.h"
#include "err.h"
#include "fs.h"
#include "jx.h"

#include <ctype.h>
#include <stdbool.h>
#include <strings.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Writes text to the case folder's rel, making its folders. */
static void put(const char *rel, const char *text)
{
	char path[1024], *slash;
	struct err e;
	int rc;

	snprintf(path, sizeof(path), "%s/%s", t_tmpdir(), rel);
	slash = strrchr(path, '/');
	*slash = '\0';
	rc = fs_mkdirs(path, &e);
	*slash = '/';
	if (rc < 0 || fs_write_atomic(path, text, &e) < 0)
		CHECK_MSG(0, "%s", e.msg);
}

/* The verdict of claim id over the case folder, or "" when it has none
 * (copied into v). */
static void verdict_of(const char *id, char *v, size_t n)
{
	char calib[1024];
	struct err e;
	json_t *out, *c;
	size_t i;

	snprintf(calib, sizeof(calib), "%s/calib", t_tmpdir());
	v[0] = '\0';
	if (!(out = claims_compute(t_tmpdir(), calib, &e))) {
		CHECK_MSG(0, "%s", e.msg);
		return;
	}
	json_array_foreach(json_object_get(out, "claims"), i, c)
		if (!strcmp(json_string_value(json_object_get(c, "id")), id) &&
		    json_is_string(json_object_get(c, "verdict")))
			snprintf(v, n, "%s",
				 json_string_value(json_object_get(c, "verdict")));
	json_decref(out);
}

#define EXPECT(id, want)                                                  \
	do {                                                              \
		char v_[512];                                             \
		verdict_of(id, v_, sizeof(v_));                           \
		CHECK_MSG(!strcmp(v_, want), "(%s): '%s', not '%s'", id,  \
			  v_, want);                                      \
	} while (0)

/* An RTT sweep: sync's ITL grows 1 s a second of RTT, async's `slope` */
static void rtt_sweep(const char *rel, const char *alpha_col,
		      const char *alpha, double slope, int header)
{
	char text[1024];
	size_t n = 0;

	if (header)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "point,%s%s"
				      "tenants.0.wan.rtt_s,protocol.kind,n_seeds,"
				      "all.itl_s.mean_mean,all.itl_s.mean_ci95\n",
				      alpha_col,
				      *alpha_col ? "," : "");
	for (int k = 0; k < 2; k++)
		for (int r = 0; r < 3; r++) {
			double rtt = 0.02 + 0.06 * r;

			n += (size_t)snprintf(text + n, sizeof(text) - n,
					      "%d,%s%s%g,%s,2,%.17g,0\n", 3 * k + r,
					      alpha, *alpha ? "," : "", rtt,
					      k ? "async" : "sync",
					      0.1 + (k ? slope : 1) * rtt);
		}
	if (header) {
		put(rel, text);
	} else {
		char *old, path[1024];

		snprintf(path, sizeof(path), "%s/%s", t_tmpdir(), rel);
		old = fs_slurp(path, NULL);
		HS_ASSERT(old != NULL);
		old = realloc(old, strlen(old) + n + 1);
		strcat(old, text);
		put(rel, old);
		free(old);
	}
}

static void summaries(double async_itl, double alpha, double t_draft)
{
	char text[256];

	snprintf(text, sizeof(text), "{\"all\": {\"alpha\": %g, \"itl_s\": "
		 "{\"mean\": %g}}}", alpha, async_itl);
	put("runs/async/summary.json", text);
	put("runs/edge_only/summary.json", "{\"all\": {\"itl_s\": {\"mean\": 0.1}}}");
	snprintf(text, sizeof(text), "{\"t_draft_s\": %g, \"capacity_tenants\": "
		 "300}", t_draft);
	put("formulas.json", text);
}

/* (a) holds when async hides at least half the RTT's growth, at the
 * measured alpha or from an alpha up */
static void claim_a_hides(void)
{
	summaries(0.2, 0.7, 0.1);
	rtt_sweep("sweeps/itl-vs-rtt/sweep.csv", "", "", 0.2, 1);
	EXPECT("a", "holds");
	rtt_sweep("sweeps/itl-vs-rtt/sweep.csv", "", "", 0.9, 1);
	EXPECT("a", "does not hold");
	rtt_sweep("sweeps/itl-vs-rtt-alpha/sweep.csv",
		  "tenants.0.acceptance.alpha", "0.5", 0.8, 1);
	rtt_sweep("sweeps/itl-vs-rtt-alpha/sweep.csv",
		  "tenants.0.acceptance.alpha", "0.9", 0.3, 0);
	EXPECT("a", "holds only when alpha is at least 0.9 (the measured "
	       "drafts, alpha 0.700, do not hide it)");
}

/* (a) over a sweep of one RTT, or none, gives no verdict: no slope is
 * one (it had printed -nan, or slopes of rounding, and "holds") */
static void claim_a_one_rtt(void)
{
	static const char *const sweeps[] = {
		"point,tenants.0.wan.rtt_s,protocol.kind,n_seeds,"
		"all.itl_s.mean_mean,all.itl_s.mean_ci95\n"
		"0,0.05,sync,2,0.15,0\n1,0.05,sync,2,0.15000000000000002,0\n"
		"2,0.05,async,2,0.11,0\n3,0.05,async,2,0.12,0\n",
		"point,tenants.0.wan.rtt_s,protocol.kind,n_seeds,"
		"all.itl_s.mean_mean,all.itl_s.mean_ci95\n",
	};

	summaries(0.2, 0.7, 0.1);
	for (size_t i = 0; i < 2; i++) {
		char calib[1024];
		struct err e;
		json_t *out, *c;
		size_t k;

		put("sweeps/itl-vs-rtt/sweep.csv", sweeps[i]);
		EXPECT("a", "");
		snprintf(calib, sizeof(calib), "%s/calib", t_tmpdir());
		out = claims_compute(t_tmpdir(), calib, &e);
		json_array_foreach(json_object_get(out, "claims"), k, c)
			if (!strcmp(json_string_value(json_object_get(c, "id")),
				    "a")) {
				char *text = json_dumps(c, 0);

				CHECK_MSG(strstr(text, "No verdict: ") &&
					  !strstr(text, "nan"), "%s", text);
				free(text);
			}
		json_decref(out);
	}
}

/* (a) as a region: the regions sweep over draft time (10, 50 ms), alpha
 * (0.5, 0.9) and RTT (20, 200 ms); async hides 80% at alpha 0.9 with a
 * 10 ms draft, 20% with a 50 ms one, and 10% at alpha 0.5. */
static void claim_a_region(void)
{
	static const double d[2] = { 0.01, 0.05 }, a[2] = { 0.5, 0.9 };
	static const double rtt[2] = { 0.02, 0.2 };
	static const char *const kinds[3] = { "sync", "async", "cloud_spec" };
	char text[8192];
	size_t n = 0;
	int point = 0;

	summaries(0.2, 0.7, 0.1);
	rtt_sweep("sweeps/itl-vs-rtt/sweep.csv", "", "", 0.2, 1);
	n += (size_t)snprintf(text + n, sizeof(text) - n, "point,"
			      "tenants.0.device.draft_base_s,"
			      "tenants.0.acceptance.alpha,tenants.0.wan.rtt_s,"
			      "protocol.kind,n_seeds,all.itl_s.mean_mean\n");
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 2; j++)
			for (int k = 0; k < 2; k++)
				for (int p = 0; p < 3; p++) {
					double slope = p == 0 ? 1 : p == 2 ? 0 :
						       j == 0 ? 0.9 : i == 0 ? 0.2 : 0.8;

					n += (size_t)snprintf(text + n, sizeof(text) - n,
						"%d,%g,%g,%g,%s,2,%.17g\n", point++, d[i],
						a[j], rtt[k], kinds[p],
						0.1 + slope * rtt[k]);
				}
	put("sweeps/regions/sweep.csv", text);
	EXPECT("a", "holds from alpha 0.9 at a draft time of 10 ms; nowhere at "
	       "a draft time of 50 ms; no drafts to place");
	/* a published figure is placed at the phone's row (here the middle
	 * of the swept draft times, 50 ms) */
	put("calib/acceptance/pub.json", "{\"kind\": \"published-acceptance\", "
	    "\"name\": \"pub\", \"alpha\": 0.95}");
	EXPECT("a", "holds from alpha 0.9 at a draft time of 10 ms; nowhere at "
	       "a draft time of 50 ms; of the 1 published figures (alpha "
	       "0.950-0.950), none holds at the phone's 50 ms a draft token "
	       "(swept: 50 ms)");
}

/* The region in words: runs of rows with the same lowest alpha. */
static void region_words(void)
{
	struct cmap m = { .yname = "RTT", .yscale = 1e3, .nx = 3, .ny = 4,
			  .x = { 0.5, 0.8, 0.9 }, .y = { 0.01, 0.05, 0.1, 0.4 } };
	static const bool ok[4][3] = { { 0, 1, 1 }, { 0, 1, 1 }, { 0, 0, 1 },
				       { 1, 0, 0 } };
	char out[512];

	for (int j = 0; j < 4; j++)
		for (int i = 0; i < 3; i++)
			m.ok[j][i] = ok[j][i];
	cmap_region(&m, "%g", "ms", out, sizeof(out));
	CHECK_MSG(!strcmp(out, "from alpha 0.8 at RTT 10-50 ms; from alpha 0.9 "
			  "at RTT 100 ms; nowhere at RTT 400 ms"), "%s", out);
	for (int j = 0; j < 4; j++)
		for (int i = 0; i < 3; i++)
			m.ok[j][i] = true;
	cmap_region(&m, "%g", "ms", out, sizeof(out));
	CHECK_MSG(!strcmp(out, "everywhere swept"), "%s", out);
}

/* An acceptance profile of a draft of model (NULL: a profile naming no
 * target). */
static void model_profile(const char *name, const char *model,
			  const char *quant, double alpha)
{
	char rel[128], text[512], target[96] = "";

	if (model)
		snprintf(target, sizeof(target), "\"target\": \"%s:f32\", ", model);
	snprintf(rel, sizeof(rel), "calib/%s", name);
	snprintf(text, sizeof(text), "{\"kind\": \"acceptance\", %s"
		 "\"draft_quant\": \"%s\", \"alpha_greedy\": %g, "
		 "\"alpha_stochastic\": %g, \"ppl\": 5, \"ppl_draft\": 6, "
		 "\"mean_accepted_per_gamma\": {\"4\": 2.5}}", target, quant,
		 alpha, alpha);
	put(rel, text);
}

static void profile(const char *name, const char *quant, double alpha)
{
	model_profile(name, NULL, quant, alpha);
}

/* (b) holds when W4A16 keeps 80% of W8A16's alpha and W4A4 does not */
static void claim_b_formats(void)
{
	profile("accept-w8.json", "w8a16", 0.9);
	profile("accept-w4.json", "w4a16-g128-sym", 0.8);
	profile("accept-w4a4.json", "w4a4-g32", 0.5);
	EXPECT("b", "holds");
	profile("accept-w4b.json", "w4a16-g32-asym", 0.6);
	EXPECT("b", "holds only when the W4A16 draft is w4a16-g128-sym");
	profile("accept-w4a4.json", "w4a4-g32", 0.85);
	EXPECT("b", "does not hold");
	{
		/* an alpha that is no share is bad input, not a verdict */
		char calib[1024];
		struct err e;
		json_t *out;

		snprintf(calib, sizeof(calib), "%s/calib", t_tmpdir());
		profile("accept-w4a4.json", "w4a4-g32", 1.7);
		out = claims_compute(t_tmpdir(), calib, &e);
		CHECK_MSG(!out && strstr(e.msg, "accept-w4a4.json: /alpha_greedy: "
					 "expected a number in [0, 1]"), "%s",
			  out ? "computed" : e.msg);
		json_decref(out);
		profile("accept-w4a4.json", "w4a4-g32", 0.85);
	}
}

/* (b) with two models: each draft against its own model's reference (its
 * W8A16, else the target), and the verdict names the model */
static void claim_b_models(void)
{
	model_profile("accept-a-w8.json", "a", "w8a16", 0.9);
	model_profile("accept-a-w4.json", "a", "w4a16-g128-sym", 0.75);
	model_profile("accept-a-w4a4.json", "a", "w4a4-g32", 0.3);
	model_profile("accept-b-w4.json", "b", "w4a16-g128-sym", 0.79);
	model_profile("accept-b-w4a4.json", "b", "w4a4-g32", 0.1);
	/* a's W4A16 keeps 0.75 / 0.9 = 83%; b's 79% of its target's 1 */
	EXPECT("b", "holds only when the W4A16 draft is w4a16-g128-sym (a)");
	/* against b's own W8A16, 0.79 / 0.95 = 83% */
	model_profile("accept-b-w8.json", "b", "w8a16", 0.95);
	EXPECT("b", "holds");
	/* a's W8A16 does not lift b's reference */
	model_profile("accept-b-w8.json", "b", "w8a16", 0.99);
	model_profile("accept-a-w8.json", "a", "w8a16", 0.5);
	EXPECT("b", "holds only when the W4A16 draft is w4a16-g128-sym (a)");
}

/* Whether claim id's blocks (its tables and sentences) hold text */
static bool claim_says(const char *id, const char *text)
{
	char calib[1024];
	struct err e;
	json_t *out, *c;
	size_t i;
	bool found = false;

	snprintf(calib, sizeof(calib), "%s/calib", t_tmpdir());
	if (!(out = claims_compute(t_tmpdir(), calib, &e))) {
		CHECK_MSG(0, "%s", e.msg);
		return false;
	}
	json_array_foreach(json_object_get(out, "claims"), i, c)
		if (!strcmp(json_string_value(json_object_get(c, "id")), id)) {
			char *dump = json_dumps(c, JSON_COMPACT);

			found = dump && strstr(dump, text);
			free(dump);
		}
	json_decref(out);
	return found;
}

/* (c) holds when the shared GPU carries its tenants at dedicated's ITL;
 * the same rows at the fast end of the device's bands, and at the slow
 * end with 16 tenants' continuous rate `slow` */
static void batching_csv(const char *none16, const char *itl16,
			 const char *slow16)
{
	static const char *const ends[] = { "none", "low", "high" };
	char text[2048];
	size_t n = (size_t)snprintf(text, sizeof(text), "point,tenants.0.count,"
		"cloud.policy,tenants.0.device.draft_band,n_seeds,"
		"cloud.busy_fraction_mean,cloud.gpus_mean,all.tokens_per_s_mean,"
		"all.itl_s.mean_mean,all.ttft_s.p99_mean\n");
	int pt = 0;

	for (int k = 0; k < 3; k++)
		n += (size_t)snprintf(text + n, sizeof(text) - n,
			"%d,1,dedicated,%s,2,0.1,1,10,0.1,1\n"
			"%d,1,continuous,%s,2,0.1,1,10,0.1,1\n"
			"%d,4,dedicated,%s,2,0.1,4,40,0.1,1\n"
			"%d,4,continuous,%s,2,0.4,1,40,0.1,1\n"
			"%d,16,dedicated,%s,2,0.1,16,160,0.1,1\n"
			"%d,16,continuous,%s,2,0.9,1,%s,%s,1\n",
			pt, ends[k], pt + 1, ends[k], pt + 2, ends[k],
			pt + 3, ends[k], pt + 4, ends[k], pt + 5, ends[k],
			k == 2 ? slow16 : none16, k == 0 ? itl16 : "0.1"),
		pt += 6;
	put("sweeps/batching/sweep.csv", text);
}

static void claim_c_batching(void)
{
	batching_csv("160", "0.1", "160");
	EXPECT("c", "holds");
	CHECK(claim_says("c", "at the slow ends (\\\"high\\\"), it holds: the "
			 "verdict holds across the bands"));
	batching_csv("60", "0.3", "160");
	EXPECT("c", "holds only when the tenants are at most 4");
	batching_csv("160", "0.1", "60");
	EXPECT("c", "holds");
	CHECK(claim_says("c", "it holds; at the slow ends (\\\"high\\\"), it "
			 "holds only when the tenants are at most 4: the verdict "
			 "moves inside the bands"));
	{
		/* a field that is no number (or nothing) is bad input, not a
		 * 0 to give a verdict on */
		static const char *const bad[] = { "abc", "", "nan" };
		struct err e;
		json_t *out;

		for (size_t i = 0; i < 3; i++) {
			batching_csv(bad[i], "0.1", "160");
			out = claims_compute(t_tmpdir(), NULL, &e);
			CHECK_MSG(!out && strstr(e.msg, "sweep.csv:7: "
						 "all.tokens_per_s_mean: expected a "
						 "number"), "\"%s\": %s", bad[i],
				  out ? "computed" : e.msg);
			json_decref(out);
		}
	}
}

/* (d) a stationary queue below and above capacity: 100 tenants at loads
 * 0.5, 1 and 1.5 of a capacity of 2 requests a second (10 slots held 10 s:
 * waits start at 1 a second); it holds when the delivered rate levels off
 * at the capacity, the wait past it grows 2x, and ITL does not fall */
static void claim_d_queueing(void)
{
	static const char head[] = "point,tenants.0.workload.rate_per_s,n_seeds,"
		"all.tokens_per_s_mean,cloud.admission_wait_s.mean_mean,"
		"cloud.admission_wait_s.mean_ci95,all.itl_s.mean_mean,"
		"all.ttft_s.p50_mean,cloud.busy_fraction_mean\n";
	static const struct { double w15, itl15; const char *want; } k[] = {
		{ 50, 0.1, "holds: the delivered rate levels off at 2.000 requests "
		  "a second, 100.0% of the formulas' capacity; the mean wait for the "
		  "cache is 5 s at the capacity and 50 s at 1.50x it" },
		{ 6, 0.1, "does not hold: the delivered rate levels off at 2.000 "
		  "requests a second, 100.0% of the formulas' capacity; the mean wait "
		  "for the cache is 5 s at the capacity and 6 s at 1.50x it" },
		{ 50, 0.05, "does not hold: the delivered rate levels off at 2.000 "
		  "requests a second, 100.0% of the formulas' capacity; the mean wait "
		  "for the cache is 5 s at the capacity and 50 s at 1.50x it; the "
		  "mean ITL falls as the load rises" },
	};
	char text[1024];

	put("formulas.json", "{\"capacity_requests_per_s\": 2, \"kv_slots\": 10,"
	    " \"request_lifetime_s\": 10, \"kv_wait_onset_requests_per_s\": 1,"
	    " \"capacity_bound\": \"KV cache\"}");
	put("sweeps/queueing/sweep.json", "{\"set\": {\"/tenants/0/count\": 100,"
	    " \"/tenants/0/workload\": {\"output_tokens\": 100}}}");
	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		snprintf(text, sizeof(text), "%s0,0.01,2,100,0.2,0,0.1,5,0.5\n"
			 "1,0.02,2,196,5,1,0.1,9,0.9\n2,0.03,2,200,%g,1,%g,60,1\n",
			 head, k[i].w15, k[i].itl15);
		put("sweeps/queueing/sweep.csv", text);
		EXPECT("d", k[i].want);
	}
}

/* (e) holds when async ITL stays within 15% of the draft time */
static void claim_e_close(void)
{
	summaries(0.105, 0.7, 0.1);
	/* async ITL 0.1 + 0.05 RTT: at most 0.11, within 0.115 */
	rtt_sweep("sweeps/itl-vs-rtt/sweep.csv", "", "", 0.05, 1);
	EXPECT("e", "holds");
	rtt_sweep("sweeps/itl-vs-rtt/sweep.csv", "", "", 0.5, 1);
	EXPECT("e", "does not hold");
}

/* (f): one device and target; the latency rows at one point, the capacity
 * rows at 100 and 1000 clients: sync 158, async 316, cloud_spec 126 by the
 * log interpolation through 90%, so edge / cloud_spec 2.51 against the
 * formula's 2.4 (within 25%). */
static void claim_f_cloud_spec(void)
{
	static const char cap[] =
		"point,tenants.0.device.profile,cloud.model,cloud.tp,"
		"tenants.0.count,all.slo_attainment_mean,protocol.kind\n"
		"0,d.json,m,1,100,1,sync\n1,d.json,m,1,1000,0.5,sync\n"
		"2,d.json,m,1,100,1,async\n3,d.json,m,1,1000,0.8,async\n"
		"4,d.json,m,1,100,1,cloud_spec\n5,d.json,m,1,1000,0,cloud_spec\n"
		"6,d.json,m,1,100,1,cloud_only\n7,d.json,m,1,1000,1,cloud_only\n";
	char itl[1024];

	for (int k = 0; k < 2; k++) {
		snprintf(itl, sizeof(itl),
			 "point,tenants.0.device.profile,cloud.model,cloud.tp,"
			 "tenants.0.acceptance.alpha,tenants.0.wan.rtt_s,"
			 "protocol.kind,all.tpot_s_mean\n"
			 "0,d.json,m,1,0.8,0.05,sync,0.05\n"
			 "1,d.json,m,1,0.8,0.05,async,%s\n"
			 "2,d.json,m,1,0.8,0.05,cloud_spec,0.01\n"
			 "3,d.json,m,1,0.8,0.05,cloud_only,0.02\n",
			 k ? "0.005" : "0.04");
		put("sweeps/cloud-spec-itl/sweep.csv", itl);
		put("sweeps/cloud-spec-capacity/sweep.csv", cap);
		put("formulas-cloud-m-tp1.json",
		    "{\"cloud_spec_capacity_ratio\": 2.4}");
		EXPECT("f", k ? "does not hold on latency: edge drafting is faster "
		       "than cloud_spec at 1 of 1 points of cloud-spec-itl and 0 of "
		       "0 of the regions map; holds on capacity: "
		       "the ratio is within 25% of 1 + gamma t_d / t_v in 1 of 1 "
		       "cases, edge drafting carrying at most 2.51x cloud_spec's "
		       "clients per GPU"
		       : "holds on latency: edge drafting is faster than cloud_spec "
		       "at 0 of 1 points of cloud-spec-itl and 0 of 0 of the "
		       "regions map; holds on capacity: the ratio is "
		       "within 25% of 1 + gamma t_d / t_v in 1 of 1 cases, edge "
		       "drafting carrying at most 2.51x cloud_spec's clients per "
		       "GPU");
	}
	put("formulas-cloud-m-tp1.json", "{\"cloud_spec_capacity_ratio\": 1.5}");
	EXPECT("f", "does not hold on latency: edge drafting is faster than "
	       "cloud_spec at 1 of 1 points of cloud-spec-itl and 0 of 0 of the "
	       "regions map; does not hold on capacity: the "
	       "ratio is within 25% of 1 + gamma t_d / t_v in 0 of 1 cases, edge "
	       "drafting carrying at most 2.51x cloud_spec's clients per GPU");
}

/* Whether text holds the word w (not inside a longer word), any case. */
static bool has_word(const char *text, const char *w)
{
	size_t n = strlen(w);

	for (const char *p = text; *p; p++)
		if (!strncasecmp(p, w, n) && (p == text || !isalpha((unsigned char)p[-1])) &&
		    !isalpha((unsigned char)p[n]))
			return true;
	return false;
}

/* A REPORT.md written by scripts/report.sh from fixtures of every claim,
 * with runs that have figures they lack (an edge-only alpha), reads no nan
 * or inf anywhere. */
static void report_has_no_nan(void)
{
	char cmd[2048], path[1024];
	struct err e;
	json_t *out;
	char *md;

	summaries(0.2, 0.7, 0.1);
	rtt_sweep("sweeps/itl-vs-rtt/sweep.csv", "", "", 0.2, 1);
	put("formulas.json", "{\"t_draft_s\": 0.1, \"capacity_tenants\": 300, "
	    "\"capacity_requests_per_s\": 2, \"kv_slots\": 10, "
	    "\"request_lifetime_s\": 10, \"kv_wait_onset_requests_per_s\": 1, "
	    "\"capacity_bound\": \"KV cache\"}");
	put("sweeps/queueing/sweep.json", "{\"set\": {\"/tenants/0/count\": 100,"
	    " \"/tenants/0/workload\": {\"output_tokens\": 100}}}");
	put("sweeps/queueing/sweep.csv", "point,tenants.0.workload.rate_per_s,"
	    "n_seeds,all.tokens_per_s_mean,cloud.admission_wait_s.mean_mean,"
	    "cloud.admission_wait_s.mean_ci95,all.itl_s.mean_mean,"
	    "all.ttft_s.p50_mean,cloud.busy_fraction_mean\n"
	    "0,0.002,2,20,0,0,0.1,5,0.1\n1,0.02,2,196,5,1,0.1,9,0.9\n"
	    "2,0.03,2,200,50,1,0.1,60,1\n");
	put("runs/edge_only/summary.json", "{\"groups\": [{\"protocol\": "
	    "\"edge_only\"}], \"all\": {\"itl_s\": {\"mean\": 0.1, \"p99\": "
	    "0.2}, \"ttft_s\": {\"p50\": 3}, \"alpha\": 0, "
	    "\"tokens_per_verdict\": 0, \"tokens_per_s_per_tenant\": 10, "
	    "\"slo_attainment\": 0}, \"cloud\": {\"busy_fraction\": 0}}");
	snprintf(path, sizeof(path), "%s/claims.json", t_tmpdir());
	out = claims_compute(t_tmpdir(), path, &e);
	CHECK_MSG(out != NULL, "%s", out ? "" : e.msg);
	if (!out)
		return;
	CHECK(jx_save(path, out, &e) == 0);
	json_decref(out);
	snprintf(cmd, sizeof(cmd), "sh scripts/report.sh '%s' > /dev/null",
		 t_tmpdir());
	CHECK(system(cmd) == 0);
	md = t_slurp("REPORT.md");
	CHECK_MSG(md != NULL, "no REPORT.md");
	if (!md)
		return;
	CHECK_MSG(!has_word(md, "nan") && !has_word(md, "inf") &&
		  !has_word(md, "-nan") && !has_word(md, "-inf"),
		  "REPORT.md reads nan or inf");
	CHECK_MSG(strstr(md, "| edge_only | edge_only |") &&
		  strstr(md, "An empty cell: the protocol has no such figure"),
		  "the setting table has no footnoted empty cell");
	free(md);
}

/* With nothing in the folder, every claim says what it lacks and has no
 * verdict; the thresholds are stated all the same. */
static void claims_missing_inputs(void)
{
	char calib[1024];
	struct err e;
	json_t *out, *c;
	size_t i;

	snprintf(calib, sizeof(calib), "%s/calib", t_tmpdir());
	out = claims_compute(t_tmpdir(), calib, &e);
	CHECK(out && json_array_size(json_object_get(out, "claims")) == 6 &&
	      json_array_size(json_object_get(out, "thresholds")) == 9);
	json_array_foreach(json_object_get(out, "claims"), i, c) {
		const char *first = json_string_value(json_object_get(
			json_array_get(json_object_get(c, "blocks"), 0), "text"));

		CHECK(json_is_null(json_object_get(c, "verdict")));
		CHECK_MSG(first && !strncmp(first, "No verdict: ", 12), "(%s) %s",
			  json_string_value(json_object_get(c, "id")),
			  first ? first : "no text");
	}
	json_decref(out);
	/* an input that is there but cannot be read is an error, not a
	 * missing one */
	put("formulas.json", "{bad");
	out = claims_compute(t_tmpdir(), calib, &e);
	CHECK_MSG(!out && strstr(e.msg, "formulas.json:1:"), "%s",
		  out ? "computed" : e.msg);
	json_decref(out);
}

const struct tcase claims_tests[] = {
	{ "claims: (a) async hides the WAN, or only from an alpha",
	  claim_a_hides },
	{ "claims: (a) over one RTT, or none, gives no verdict",
	  claim_a_one_rtt },
	{ "claims: (b) W4A16 keeps alpha and W4A4 does not", claim_b_formats },
	{ "claims: (b) each model's drafts against its own reference",
	  claim_b_models },
	{ "claims: (c) batching keeps the GPU busy, up to a tenant count",
	  claim_c_batching },
	{ "claims: (d) ITL blows up past the knee", claim_d_queueing },
	{ "claims: (a) as a region over alpha and the draft time",
	  claim_a_region },
	{ "claims: a region said in words", region_words },
	{ "claims: (f) cloud_spec against edge drafting, latency and capacity",
	  claim_f_cloud_spec },
	{ "claims: a report from fixtures reads no nan or inf",
	  report_has_no_nan },
	{ "claims: (e) async ITL close to the draft time", claim_e_close },
	{ "claims: missing inputs give no verdict; an unreadable one is an error",
	  claims_missing_inputs },
	{ 0 },
};
