/* test_energy.c: the radio's tail accounting against a union of intervals
 * computed apart, and a run's energy against its trace: the seconds the
 * edge computed, the radio's transfers and the GPU's iterations, each
 * integrated from the spans of trace.json, give the joules the summary
 * reports; and the parts add up to the total. */
#include "harness.h"

#include "energy.h"
#include "report.h"
#include "rng.h"
#include "sim.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/* ---- the radio ---- */

struct xfer {
	double t_s;
	uint32_t bytes;
	int up;
};

static int by_start(const void *a, const void *b)
{
	double x = ((const struct xfer *)a)->t_s, y = ((const struct xfer *)b)->t_s;

	return (x > y) - (x < y);
}

/* The same energy from the whole list at once: each transfer's bits and
 * active time, and the connected intervals [t, t + go + tail] merged (each
 * run of overlapping ones pays one promotion). */
static double radio_union_j(const struct radio *r, struct xfer *x, size_t n,
			    double up_bps, double down_bps)
{
	double j = 0, lo = 0, hi = -1;

	qsort(x, n, sizeof(*x), by_start);
	for (size_t i = 0; i < n; i++) {
		double bits = 8.0 * x[i].bytes;
		double go = bits / (x[i].up ? up_bps : down_bps);

		j += bits * (x[i].up ? r->up_j_per_bit : r->down_j_per_bit) +
		     (r->active_w - r->tail_w) * go;
		if (x[i].t_s >= hi) { /* a new run of connected time */
			if (hi > lo)
				j += r->tail_w * (hi - lo);
			j += r->promo_j;
			lo = x[i].t_s;
			hi = lo;
		}
		if (x[i].t_s + go + r->tail_s > hi)
			hi = x[i].t_s + go + r->tail_s;
	}
	if (hi > lo)
		j += r->tail_w * (hi - lo);
	return j;
}

static void radio_tail_union(void)
{
	const char *const *names = radio_names();
	gsl_rng *g = rng_new(7, 11);

	CHECK(radio_find("wifi") && radio_find("lte") && !radio_find("x"));
	for (size_t k = 0; names[k]; k++) {
		const struct radio *r = radio_find(names[k]);
		struct xfer x[400];
		double on = 0, sum = 0, t = 0;

		/* one transfer: its bits, a promotion and a whole tail */
		CHECK_NEAR(radio_transfer_j(r, &on, 5, 1000, 1e6, 1),
			   8000 * r->up_j_per_bit + r->active_w * 8e-3 +
			   r->promo_j + r->tail_w * r->tail_s, 1e-12);
		CHECK_NEAR(on, 5 + 8e-3 + r->tail_s, 1e-12);
		/* gaps around the tail, some within it, some beyond */
		on = 0;
		for (size_t i = 0; i < 400; i++) {
			t += gsl_rng_uniform(g) * 2 * r->tail_s;
			x[i] = (struct xfer){ t, (uint32_t)(40 + gsl_rng_uniform_int(g, 4000)),
					      (int)(i % 3 != 0) };
			sum += radio_transfer_j(r, &on, x[i].t_s, x[i].bytes,
						x[i].up ? 20e6 : 50e6, x[i].up);
		}
		CHECK_MSG(fabs(sum - radio_union_j(r, x, 400, 20e6, 50e6)) <=
			  1e-9 * sum, "%s: %.12g J charged as it went, the "
			  "union gives %.12g", r->name, sum,
			  radio_union_j(r, x, 400, 20e6, 50e6));
	}
	gsl_rng_free(g);
}

/* ---- a run against its trace ---- */

static const char energy_cfg[] =
	"{\"seed\": 5, \"tenants\": ["
	" {\"name\": \"sp\", \"count\": 3, \"protocol\": {\"kind\": \"async\"},"
	"  \"device\": {\"draft_base_s\": 0.02, \"draft_per_ctx_s\": 1e-5,"
	"   \"prefill_per_token_s\": 0.002, \"power_busy_w\": 6,"
	"   \"power_idle_w\": 1.5, \"battery_wh\": 15},"
	"  \"workload\": {\"requests\": 4, \"prompt_tokens\": 40,"
	"   \"output_tokens\": 90, \"think_s\": 3},"
	"  \"acceptance\": {\"model\": \"iid\", \"alpha\": 0.6},"
	"  \"wan\": {\"rtt_s\": 0.06, \"radio\": \"lte\"}},"
	" {\"name\": \"eo\", \"count\": 2, \"protocol\": {\"kind\": \"edge_only\"},"
	"  \"device\": {\"draft_base_s\": 0.03, \"prefill_per_token_s\": 0.002,"
	"   \"power_busy_w\": 5, \"power_idle_w\": 1},"
	"  \"workload\": {\"requests\": 3, \"prompt_tokens\": 20,"
	"   \"output_tokens\": 30}, \"wan\": {\"rtt_s\": 0.05}},"
	" {\"name\": \"co\", \"count\": 2, \"protocol\": {\"kind\": \"cloud_only\"},"
	"  \"device\": {\"draft_base_s\": 0.03, \"prefill_per_token_s\": 0.002,"
	"   \"power_busy_w\": 5, \"power_idle_w\": 1},"
	"  \"workload\": {\"requests\": 3, \"prompt_tokens\": 64,"
	"   \"output_tokens\": 50, \"think_s\": 20},"
	"  \"wan\": {\"rtt_s\": 0.05}}],"
	" \"cloud\": {\"replicas\": 2, \"gpu\": {\"preset\": \"L40S\","
	"  \"usd_per_hour\": 2}}}";

/* What the trace says of each tenant: seconds computing, and the radio's
 * transfers (an uplink span starts when the edge sends, a downlink span
 * ends when the edge receives); and the GPUs' busy seconds. */
struct seen {
	double compute_s[8];
	struct xfer x[8][4096];
	size_t nx[8];
	double gpu_busy_s;
};

static int read_trace(FILE *f, struct seen *w)
{
	json_error_t je;
	json_t *doc, *evs;

	rewind(f);
	if (!(doc = json_loadf(f, 0, &je))) {
		CHECK_MSG(0, "trace: %s", je.text);
		return -1;
	}
	evs = json_object_get(doc, "traceEvents");
	for (size_t i = 0; i < json_array_size(evs); i++) {
		const json_t *e = json_array_get(evs, i);
		const char *name = json_string_value(json_object_get(e, "name"));
		int pid = (int)json_integer_value(json_object_get(e, "pid"));
		size_t tid = (size_t)json_integer_value(json_object_get(e, "tid"));
		double ts = json_number_value(json_object_get(e, "ts")) * 1e-6;
		double dur = json_number_value(json_object_get(e, "dur")) * 1e-6;
		const json_t *bytes = json_object_get(json_object_get(e, "args"),
						      "bytes");

		if (strcmp(json_string_value(json_object_get(e, "ph")), "X"))
			continue;
		if (pid == TRACE_GPU) {
			w->gpu_busy_s += dur;
		} else if (pid == TRACE_EDGE && tid < 8 &&
			   (!strcmp(name, "draft") || !strcmp(name, "prefill") ||
			    !strcmp(name, "token"))) {
			w->compute_s[tid] += dur;
		} else if ((pid == TRACE_UP || pid == TRACE_DOWN) && tid < 8 &&
			   w->nx[tid] < 4096) {
			w->x[tid][w->nx[tid]++] = (struct xfer){
				pid == TRACE_UP ? ts : ts + dur,
				(uint32_t)json_integer_value(bytes), pid == TRACE_UP };
		}
	}
	json_decref(doc);
	return 0;
}

static double group_num(const json_t *sum, size_t g, const char *key)
{
	return json_number_value(json_object_get(
		json_array_get(json_object_get(sum, "groups"), g), key));
}

static void energy_from_trace(void)
{
	static struct seen w;
	struct cfg c;
	struct sim s;
	struct trace tr;
	struct err e;
	FILE *f = tmpfile();
	json_t *sum;
	double edge_j[3] = { 0 }, tokens[3] = { 0 }, busy[3] = { 0 };

	memset(&w, 0, sizeof(w));
	if (cfg_load(&c, t_write("energy.json", energy_cfg), NULL, 0, &e) < 0) {
		CHECK_MSG(0, "%s", e.msg);
		fclose(f);
		return;
	}
	trace_begin(&tr, f);
	sim_init(&s, &c, (struct sim_opts){ .trace = &tr, .trace_tenants = 7 },
		 &e);
	CHECK(sim_run(&s) == 0);
	trace_end(&tr);
	sum = rep_summary(&s);
	if (read_trace(f, &w) == 0) {
		for (uint32_t i = 0; i < s.n_tenants; i++) {
			const struct tenant *t = &s.t[i];
			const struct cfg_group *g = &c.groups[t->group];
			const struct cfg_wan *wan = &g->wan;
			double radio = radio_union_j(&wan->radio, w.x[i], w.nx[i],
						     wan->up_bps, wan->down_bps);
			double comp = t->st.compute_s + t->st.prefill_s;

			CHECK_MSG(fabs(comp - w.compute_s[i]) <= 1e-6,
				  "tenant %u: computed %.9g s, the trace's spans "
				  "%.9g s", i, comp, w.compute_s[i]);
			CHECK_MSG(fabs(t->st.radio_j - radio) <= 1e-6 * (1 + radio),
				  "tenant %u: radio %.9g J, from the trace %.9g J",
				  i, t->st.radio_j, radio);
			/* the integral of the device's power over its
			 * requests: busy while computing, idle the rest */
			edge_j[t->group] += g->device.power_busy_w * w.compute_s[i] +
				g->device.power_idle_w * (t->st.busy_s - w.compute_s[i]) +
				radio;
			tokens[t->group] += (double)t->st.tokens;
			busy[t->group] += t->st.busy_s;
		}
		for (size_t g = 0; g < 3; g++) {
			double parts = 0;
			const char *const part[] = { "edge_compute_j_per_token",
				"edge_prefill_j_per_token", "edge_wait_j_per_token",
				"radio_j_per_token" };

			for (size_t k = 0; k < 4; k++)
				parts += group_num(sum, g, part[k]);
			CHECK_NEAR(parts, group_num(sum, g, "edge_j_per_token"),
				   1e-9 * parts);
			CHECK_NEAR(group_num(sum, g, "edge_j_per_token") * tokens[g],
				   edge_j[g], 1e-6 * edge_j[g]);
			CHECK_NEAR(group_num(sum, g, "edge_j"), edge_j[g],
				   1e-6 * edge_j[g]);
		}
		/* the battery: group sp's 15 Wh; the others give none */
		CHECK_NEAR(group_num(sum, 0, "battery_pct_per_hour"),
			   100 * edge_j[0] / 15 / busy[0], 1e-6);
		/* per answer: the joules of a finished request, and their
		 * share of 15 Wh */
		CHECK_NEAR(group_num(sum, 0, "edge_j_per_request") *
			   group_num(sum, 0, "requests"), edge_j[0],
			   1e-6 * edge_j[0]);
		CHECK_NEAR(group_num(sum, 0, "battery_pct_per_request"),
			   100 * edge_j[0] / (15 * 3600) /
			   group_num(sum, 0, "requests"), 1e-12);
		CHECK(json_is_null(json_object_get(json_array_get(
			json_object_get(sum, "groups"), 1), "battery_pct_per_hour")));
		/* edge_only sends nothing; cloud_only computes nothing */
		CHECK(group_num(sum, 1, "radio_j_per_token") == 0);
		CHECK(group_num(sum, 2, "edge_compute_j_per_token") == 0);
		CHECK(group_num(sum, 1, "cloud_j") == 0);
		/* the cloud: L40S at 33 W idle, 350 W busy, 2 GPUs */
		{
			const json_t *cl = json_object_get(sum, "cloud");
			double span = s.end_s, j = 33 * 2 * span + (350 - 33) *
				  w.gpu_busy_s;

			CHECK_NEAR(json_number_value(json_object_get(cl, "energy_j")),
				   j, 1e-6 * j);
			CHECK_NEAR(json_number_value(json_object_get(cl, "usd")),
				   2 * 2 * span / 3600, 1e-12);
			CHECK_NEAR(group_num(sum, 0, "cloud_j") +
				   group_num(sum, 2, "cloud_j"), j, 1e-6 * j);
			CHECK_NEAR(json_number_value(json_object_get(
					   json_object_get(sum, "all"), "usd_per_mtok")),
				   2 * 2 * span / 3600 / (tokens[0] + tokens[1] +
							  tokens[2]) * 1e6, 1e-9);
		}
	}
	json_decref(sum);
	sim_release(&s);
	cfg_release(&c);
	fclose(f);
}

/* Unknown powers and prices are null, not 0. */
static void unknown_is_null(void)
{
	struct cfg c;
	struct sim s;
	struct err e;
	const char *sets[] = { "/tenants/0/device/power_busy_w=0",
			       "/cloud/gpu/usd_per_hour=0" };
	json_t *sum, *g;

	if (cfg_load(&c, t_write("energy.json", energy_cfg), sets, 2, &e) < 0) {
		CHECK_MSG(0, "%s", e.msg);
		return;
	}
	sim_init(&s, &c, (struct sim_opts){ 0 }, &e);
	CHECK(sim_run(&s) == 0);
	sum = rep_summary(&s);
	g = json_array_get(json_object_get(sum, "groups"), 0);
	CHECK(json_is_null(json_object_get(g, "edge_j_per_token")));
	CHECK(json_is_null(json_object_get(g, "edge_compute_j_per_token")));
	CHECK(json_number_value(json_object_get(g, "radio_j_per_token")) > 0);
	CHECK(json_is_null(json_object_get(g, "usd_per_mtok")));
	CHECK(json_number_value(json_object_get(g, "cloud_j_per_token")) > 0);
	CHECK(json_is_null(json_object_get(json_object_get(sum, "cloud"), "usd")));
	json_decref(sum);
	sim_release(&s);
	cfg_release(&c);
}

const struct tcase energy_tests[] = {
	{ "energy: the radio's tails charged as they come are their union",
	  radio_tail_union },
	{ "energy: a run's joules are the integral of its trace's spans",
	  energy_from_trace },
	{ "energy: an unknown power or price is null", unknown_is_null },
	{ 0 },
};
