/* report.c: folds tenant and replica counters into groups, the cloud and the
 * run. Group figures merge the sketches of their tenants; "all" merges every
 * group. */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct agg {
	struct tenant_stat st; /* sums; sketches merged */
	uint64_t tenants;
	double tput_sum, tput_sq;  /* tokens/s of each tenant, for Jain */
};

static void agg_add(struct agg *a, const struct tenant *t)
{
	const struct tenant_stat *x = &t->st;
	double tput = x->busy_s > 0 ? (double)x->tokens / x->busy_s : 0;

	a->tenants++;
#define ADD(name, meaning) a->st.name += x->name;
	TENANT_COUNTERS(ADD)
	REQ_COUNTERS(ADD)
#undef ADD
	a->st.busy_s += x->busy_s;
	a->st.ttft_sum += x->ttft_sum;
	a->st.tpot_sum += x->tpot_sum;
	sk_merge(&a->st.itl, &x->itl);
	sk_merge(&a->st.ttft, &x->ttft);
	sk_merge(&a->st.tpot, &x->tpot);
	a->tput_sum += tput;
	a->tput_sq += tput * tput;
}

static json_t *quantiles(const struct sketch *k)
{
	return json_pack("{s:f,s:f,s:f,s:f,s:f,s:f}", "mean", sk_mean(k),
			 "p50", sk_quantile(k, 0.5), "p90", sk_quantile(k, 0.9),
			 "p99", sk_quantile(k, 0.99), "p999",
			 sk_quantile(k, 0.999), "max", k->n ? k->max : 0);
}

static double ratio(double a, double b)
{
	return b > 0 ? a / b : 0;
}

/* The figures of a group (and of "all") in summary.json: X(name, kind,
 * value, meaning), kind I an integer, F a number, Q quantiles (an object
 * of mean, p50, p90, p99, p999 and max); values of the group's sums x, its
 * aggregate a, its tenant count n and the simulated seconds sim_s. */
#define GROUP_METRICS(X)                                                   \
	X(tenants, I, a->tenants, "tenants in the group")                   \
	X(requests, I, x->requests, "requests finished")                    \
	X(tokens, I, x->tokens, "output tokens committed")                  \
	X(ttft_s, Q, &x->ttft, "time to first token, s")                    \
	X(itl_s, Q, &x->itl, "inter-token latency: the gaps between "       \
	  "committed tokens of a request (0 between tokens one verdict "    \
	  "commits), s")                                                   \
	X(tpot_s, F, ratio(x->tpot_sum, (double)x->requests),               \
	  "time per output token after the first, mean over requests, s")  \
	X(tpot_quantiles_s, Q, &x->tpot,                                    \
	  "time per output token after the first, over requests, s")       \
	X(tokens_per_s, F, ratio((double)x->tokens, sim_s),                 \
	  "output tokens per simulated second")                            \
	X(tokens_per_s_per_tenant, F, ratio(a->tput_sum, n),                \
	  "tokens per second of a tenant while it has a request, mean")    \
	X(alpha, F, ratio((double)x->accepted, (double)x->judged),          \
	  "share of compared draft positions accepted")                    \
	X(tokens_per_verdict, F, ratio((double)x->tokens,                   \
					(double)x->verdicts),               \
	  "tokens committed per verdict")                                  \
	X(wasted_draft_tokens, I, x->wasted,                                \
	  "draft tokens thrown away, never accepted")                      \
	X(wasted_per_token, F, ratio((double)x->wasted, (double)x->tokens), \
	  "wasted draft tokens per output token")                          \
	X(bytes_up_per_token, F, ratio((double)x->bytes_up,                 \
					(double)x->tokens),                 \
	  "bytes sent from the edge per output token")                     \
	X(bytes_down_per_token, F, ratio((double)x->bytes_down,             \
					  (double)x->tokens),               \
	  "bytes sent to the edge per output token")                       \
	X(prompt_tokens_sent, I, x->prompt_sent,                            \
	  "prompt tokens sent to the cloud")                               \
	X(slo_attainment, F, ratio((double)x->slo_met, (double)x->requests),\
	  "share of requests that met both SLOs")                          \
	X(goodput_tokens_per_s, F, ratio((double)x->slo_tokens, sim_s),     \
	  "tokens per second of the requests that met both SLOs")          \
	X(jain_fairness, F, a->tput_sq > 0 ? a->tput_sum * a->tput_sum /     \
	  (n * a->tput_sq) : 1.0, "Jain's index of the tenants' tokens/s "  \
	  "(1: all equal)")

#define METRIC_I(v) json_integer((json_int_t)(v))
#define METRIC_F(v) json_real(v)
#define METRIC_Q(v) quantiles(v)

static json_t *agg_json(const struct agg *a, double sim_s)
{
	const struct tenant_stat *x = &a->st;
	double n = (double)a->tenants;
	json_t *o = json_object();

#define SET(name, kind, value, meaning)                                    \
	json_object_set_new(o, #name, METRIC_##kind(value));
	GROUP_METRICS(SET)
#undef SET
	return o;
}

/* The cloud: the GPU's name and count, busy share, achieved bandwidth and
 * FLOP/s, MBU, MFU, batches and their tokens, the wait of ready work for an
 * iteration (queue_wait_s) and of a request's prompt for KV-cache
 * admission (admission_wait_s), stale and discarded blocks, the most
 * requests admitted at once on a replica. */
static json_t *cloud_json(const struct sim *s, double sim_s)
{
	struct sketch bt, qw, aw;
	double busy = 0, bytes = 0, flops = 0;
	uint64_t batches = 0, tokens = 0, peak = 0;
	json_t *j;

	sk_init(&bt);
	sk_init(&qw);
	sk_init(&aw);
	for (uint32_t i = 0; i < s->n_replicas; i++) {
		const struct replica *r = &s->r[i];

		busy += r->busy_s;
		bytes += r->bytes;
		flops += r->flops;
		batches += r->batches;
		tokens += r->tokens;
		peak = r->peak_active > peak ? r->peak_active : peak;
		sk_merge(&bt, &r->batch_tokens);
		sk_merge(&qw, &r->queue_wait);
		sk_merge(&aw, &r->admit_wait);
	}
	j = json_pack("{s:s,s:I,s:f,s:f,s:f,s:f,s:f,s:I,s:I,s:o,s:o,s:o,s:I,"
		      "s:I,s:I}",
		      "gpu", s->cost.gpu,
		      "gpus", (json_int_t)s->n_replicas * s->cfg->cloud.tp,
		      "busy_fraction", ratio(busy, sim_s * s->n_replicas),
		      "achieved_bytes_per_s", ratio(bytes, busy),
		      "achieved_flops", ratio(flops, busy),
		      "mbu", ratio(ratio(bytes, busy), s->cost.peak_bw_Bps),
		      "mfu", ratio(ratio(flops, busy), s->cost.peak_flops),
		      "batches", (json_int_t)batches,
		      "batch_tokens_total", (json_int_t)tokens,
		      "batch_tokens", quantiles(&bt),
		      "queue_wait_s", quantiles(&qw),
		      "admission_wait_s", quantiles(&aw),
		      "stale_blocks_dropped", (json_int_t)s->stale_dropped,
		      "segment_blocks_discarded", (json_int_t)s->segment_discarded,
		      "peak_active_per_gpu", (json_int_t)peak);
	sk_release(&bt);
	sk_release(&qw);
	sk_release(&aw);
	/* tensor parallelism: GPUs a replica (absent at one) */
	if (s->cfg->cloud.tp > 1)
		json_object_set_new(j, "tp", json_integer(s->cfg->cloud.tp));
	return j;
}

static void agg_init(struct agg *a)
{
	memset(a, 0, sizeof(*a));
	sk_init(&a->st.itl);
	sk_init(&a->st.ttft);
	sk_init(&a->st.tpot);
}

static void agg_release(struct agg *a)
{
	sk_release(&a->st.itl);
	sk_release(&a->st.ttft);
	sk_release(&a->st.tpot);
}

json_t *rep_summary(const struct sim *s)
{
	const struct cfg *c = s->cfg;
	json_t *groups = json_array();
	struct agg all;
	/* rates and shares are of the measured window, after the warm-up */
	double sim_s = s->end_s - (s->end_s > c->warmup_s ? c->warmup_s : 0);

	agg_init(&all);
	for (size_t g = 0; g < c->n_groups; g++) {
		struct agg a;
		json_t *j;

		agg_init(&a);
		for (uint32_t i = s->group_first[g]; i < s->group_first[g + 1]; i++) {
			agg_add(&a, &s->t[i]);
			agg_add(&all, &s->t[i]);
		}
		j = agg_json(&a, sim_s);
		json_object_set_new(j, "name", json_string(c->groups[g].name));
		json_object_set_new(j, "protocol",
				    json_string(cfg_proto_names[c->groups[g].proto.kind]));
		json_object_set_new(j, "acceptance",
				    json_string(c->groups[g].accept.source));
		json_array_append_new(groups, j);
		agg_release(&a);
	}
	json_t *sum = json_pack("{s:s,s:I,s:f,s:I,s:I,s:o,s:o,s:o,s:{s:f,s:f}}",
				"name", c->name, "seed", (json_int_t)c->seed,
				"sim_time_s", s->end_s,
				"events", (json_int_t)s->events,
				"requests_done", (json_int_t)s->requests_done,
				"all", agg_json(&all, sim_s),
				"groups", groups,
				"cloud", cloud_json(s, sim_s),
				"slo", "ttft_s", c->slo.ttft_s, "tpot_s",
				c->slo.tpot_s);
	agg_release(&all);
	HS_ASSERT(sum != NULL);
	return sum;
}

/* The columns of tenants.csv, a row per tenant: X(name, printf format,
 * value, meaning), values of the tenant t, its statistics x and their
 * token count tok. */
#define TENANT_CSV_COLUMNS(X)                                              \
	X(group, "%s", s->cfg->groups[t->group].name, "the tenant's group")  \
	X(tenant, "%u", t->gindex, "the tenant's number in its group")     \
	X(requests, "%llu", (unsigned long long)x->requests,                \
	  "requests finished")                                             \
	X(tokens, "%llu", (unsigned long long)x->tokens,                    \
	  "output tokens committed")                                       \
	X(busy_s, "%.9g", x->busy_s, "time with a request in progress, s")  \
	X(tokens_per_s, "%.9g", ratio(tok, x->busy_s),                      \
	  "tokens per second while busy")                                  \
	X(ttft_mean_s, "%.9g", ratio(x->ttft_sum, (double)x->requests),     \
	  "time to first token, mean, s")                                  \
	X(itl_mean_s, "%.9g", sk_mean(&x->itl), "inter-token latency, mean, s")\
	X(itl_p50_s, "%.9g", sk_quantile(&x->itl, 0.5),                     \
	  "inter-token latency, median, s")                                \
	X(itl_p99_s, "%.9g", sk_quantile(&x->itl, 0.99),                    \
	  "inter-token latency, 99th percentile, s")                       \
	X(tpot_mean_s, "%.9g", ratio(x->tpot_sum, (double)x->requests),     \
	  "time per output token after the first, mean over requests, s")  \
	X(alpha, "%.9g", ratio((double)x->accepted, (double)x->judged),     \
	  "share of compared draft positions accepted")                    \
	X(tokens_per_verdict, "%.9g", ratio(tok, (double)x->verdicts),      \
	  "tokens committed per verdict")                                  \
	X(drafted, "%llu", (unsigned long long)x->drafted, "draft tokens made")\
	X(wasted, "%llu", (unsigned long long)x->wasted,                    \
	  "draft tokens thrown away, never accepted")                      \
	X(bytes_up, "%llu", (unsigned long long)x->bytes_up,                \
	  "bytes sent from the edge to the cloud")                         \
	X(bytes_down, "%llu", (unsigned long long)x->bytes_down,            \
	  "bytes sent from the cloud to the edge")                         \
	X(bytes_up_per_token, "%.9g", ratio((double)x->bytes_up, tok),      \
	  "bytes up per output token")                                     \
	X(bytes_down_per_token, "%.9g", ratio((double)x->bytes_down, tok),  \
	  "bytes down per output token")                                   \
	X(prompt_tokens_sent, "%llu", (unsigned long long)x->prompt_sent,   \
	  "prompt tokens sent to the cloud")                               \
	X(slo_met, "%llu", (unsigned long long)x->slo_met,                  \
	  "requests that met both SLOs")

void rep_tenants_csv(const struct sim *s, FILE *f)
{
	const char *sep = "";

	TENANT_CSV_COLUMNS(CSV_NAME)
	fputc('\n', f);
	for (uint32_t i = 0; i < s->n_tenants; i++) {
		const struct tenant *t = &s->t[i];
		const struct tenant_stat *x = &t->st;
		double tok = (double)x->tokens;

		sep = "";
		TENANT_CSV_COLUMNS(CSV_VALUE)
		fputc('\n', f);
	}
}

void rep_columns(FILE *f)
{
#define DOC(name, fmt, value, meaning) fprintf(f, "  %-22s %s\n", #name, meaning);
	fputs("summary.json, /all and each of /groups:\n", f);
	GROUP_METRICS(DOC)
	fputs("each of /groups also:\n", f);
	fprintf(f, "  %-22s %s\n", "name", "the group's name");
	fprintf(f, "  %-22s %s\n", "protocol", "the protocol its tenants run");
	fprintf(f, "  %-22s %s\n", "acceptance", "where its acceptance comes "
		"from: a profile's draft, target and text, or the model");
	fputs("requests.csv, a row per finished request:\n", f);
	REQ_CSV_COLUMNS(DOC)
	fputs("tenants.csv, a row per tenant:\n", f);
	TENANT_CSV_COLUMNS(DOC)
#undef DOC
}

static double num(const json_t *o, const char *path)
{
	char key[64];
	const char *dot = strchr(path, '.');

	if (!dot)
		return json_number_value(json_object_get(o, path));
	snprintf(key, sizeof(key), "%.*s", (int)(dot - path), path);
	return num(json_object_get(o, key), dot + 1);
}

/* The printed table's columns: the heading, the figure's place in a
 * group's summary, the scale to the unit shown, the format, and what it
 * means (the legend). */
static const struct column {
	const char *head, *path;
	double scale;
	const char *fmt, *meaning;
} columns[] = {
	{ "reqs", "requests", 1, "%6.0f", "requests finished" },
	{ "tokens", "tokens", 1, "%9.0f", "output tokens committed" },
	{ "ttft50_s", "ttft_s.p50", 1, "%9.3f",
	  "time to first token, median, seconds" },
	{ "ttft99_s", "ttft_s.p99", 1, "%9.3f",
	  "time to first token, 99th percentile, seconds" },
	{ "itl_ms", "itl_s.mean", 1e3, "%8.2f",
	  "inter-token latency (gap between committed tokens), mean, ms" },
	{ "itl99ms", "itl_s.p99", 1e3, "%8.2f",
	  "inter-token latency, 99th percentile, ms" },
	{ "tpot_ms", "tpot_s", 1e3, "%8.2f",
	  "time per output token after the first, mean over requests, ms" },
	{ "tpot50ms", "tpot_quantiles_s.p50", 1e3, "%8.2f",
	  "time per output token, median over requests, ms" },
	{ "tpot99ms", "tpot_quantiles_s.p99", 1e3, "%8.2f",
	  "time per output token, 99th percentile over requests, ms" },
	{ "alpha", "alpha", 1, "%6.3f",
	  "share of the draft positions compared that the target accepted" },
	{ "tok/v", "tokens_per_verdict", 1, "%6.2f",
	  "tokens committed per verdict (per verification round)" },
	{ "tok/s/t", "tokens_per_s_per_tenant", 1, "%7.1f",
	  "tokens per second of a tenant while it has a request, mean" },
	{ "slo%", "slo_attainment", 100, "%6.1f",
	  "share of requests that met both the TTFT and the TPOT SLO, %" },
};
#define N_COLUMNS (sizeof(columns) / sizeof(columns[0]))

/* a column's width: its format's, e.g. 9 of "%9.3f" */
static int col_width(const struct column *c)
{
	return atoi(c->fmt + 1);
}

static void print_row(FILE *f, const char *name, const char *proto,
		      const json_t *g)
{
	fprintf(f, "%-14s %-10s", name, proto);
	for (size_t i = 0; i < N_COLUMNS; i++) {
		fputc(' ', f);
		fprintf(f, columns[i].fmt, columns[i].scale * num(g, columns[i].path));
	}
	fputc('\n', f);
}

void rep_legend(FILE *f)
{
	for (size_t i = 0; i < N_COLUMNS; i++)
		fprintf(f, "  %-9s %s\n", columns[i].head, columns[i].meaning);
	fprintf(f, "  ITL p50 can be 0: a verdict commits its accepted tokens "
		   "together, and the gaps\n  between them are 0. cloud: stale "
		   "blocks dropped are async blocks drafted\n  before a "
		   "rejection, dropped unverified at the cloud.\n");
}

void rep_print(const json_t *sum, FILE *f)
{
	const json_t *groups = json_object_get(sum, "groups");
	const json_t *cl = json_object_get(sum, "cloud");
	char tp[64] = "";

	fprintf(f, "%-14s %-10s", "group", "protocol");
	for (size_t i = 0; i < N_COLUMNS; i++)
		fprintf(f, " %*s", col_width(&columns[i]), columns[i].head);
	fputc('\n', f);
	for (size_t i = 0; i < json_array_size(groups); i++) {
		const json_t *g = json_array_get(groups, i);

		print_row(f, json_string_value(json_object_get(g, "name")),
			  json_string_value(json_object_get(g, "protocol")), g);
	}
	if (json_array_size(groups) > 1)
		print_row(f, "all", "", json_object_get(sum, "all"));
	if (json_object_get(cl, "tp"))
		snprintf(tp, sizeof(tp), " (tp %.0f a replica)", num(cl, "tp"));
	fprintf(f, "cloud: %s x %.0f%s, busy %.1f%%, MBU %.1f%%, MFU %.1f%%, "
		"batch %.1f tokens (p99 %.0f), queue wait p99 %.2f ms, "
		"stale blocks dropped %.0f\n",
		json_string_value(json_object_get(cl, "gpu")), num(cl, "gpus"), tp,
		100 * num(cl, "busy_fraction"), 100 * num(cl, "mbu"),
		100 * num(cl, "mfu"), num(cl, "batch_tokens.mean"),
		num(cl, "batch_tokens.p99"), 1e3 * num(cl, "queue_wait_s.p99"),
		num(cl, "stale_blocks_dropped"));
	fprintf(f, "run: %.3f s simulated, %.0f events, goodput %.1f tokens/s, "
		"Jain fairness %.3f\n", num(sum, "sim_time_s"),
		num(sum, "events"), num(sum, "all.goodput_tokens_per_s"),
		num(sum, "all.jain_fairness"));
}

void rep_requests_header(FILE *f)
{
	const char *sep = "";

	REQ_CSV_COLUMNS(CSV_NAME)
	fputc('\n', f);
}

json_t *rep_simulate(const struct cfg *c, struct err *e)
{
	struct sim s;
	json_t *sum = NULL;

	sim_init(&s, c, (struct sim_opts){ 0 }, e);
	if (sim_run(&s) == 0)
		sum = rep_summary(&s);
	sim_release(&s);
	return sum;
}
