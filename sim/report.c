/* report.c: folds tenant and replica counters into groups, the cloud and the
 * run. Group figures merge the sketches of their tenants; "all" merges every
 * group. Energy and cost (docs/design.md, section 8): a tenant's edge
 * joules come from its seconds at its device's powers; the cloud's joules
 * and dollars are the run's, shared among groups by their GPU-seconds
 * (sim.h's group_gpu_s). A figure whose inputs are not known (a power or
 * price of 0) is NaN, null in summary.json. */
#include "report.h"

#include "energy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A tenant's edge energy, joules, by part (NaN: a power not known). */
struct edge_j {
	double compute, prefill, wait, radio, total;
	double battery; /* total / battery Wh (NaN: no battery known) */
};

static struct edge_j edge_energy(const struct cfg_group *g,
				 const struct tenant_stat *x)
{
	const struct cfg_device *d = &g->device;
	double busy_w = d->power_busy_w > 0 ? d->power_busy_w : NAN;
	double idle_w = d->power_idle_w > 0 ? d->power_idle_w : NAN;
	double wait_s = x->busy_s - x->compute_s - x->prefill_s;
	struct edge_j e = {
		.compute = x->compute_s > 0 ? busy_w * x->compute_s : 0,
		.prefill = x->prefill_s > 0 ? busy_w * x->prefill_s : 0,
		.wait = wait_s > 0 ? idle_w * wait_s : 0,
		.radio = x->radio_j,
	};

	e.total = e.compute + e.prefill + e.wait + e.radio;
	e.battery = d->battery_wh > 0 ? e.total / d->battery_wh : NAN;
	return e;
}

struct agg {
	struct tenant_stat st; /* sums; sketches merged */
	uint64_t tenants;
	double tput_sum, tput_sq;  /* tokens/s of each tenant, for Jain */
	struct edge_j edge;        /* sums */
	double cloud_j, usd, gpu_h; /* its share of the cloud's */
};

static void agg_add(struct agg *a, const struct cfg_group *g,
		    const struct tenant *t)
{
	const struct tenant_stat *x = &t->st;
	double tput = x->busy_s > 0 ? (double)x->tokens / x->busy_s : 0;
	struct edge_j e = edge_energy(g, x);

	a->edge.compute += e.compute;
	a->edge.prefill += e.prefill;
	a->edge.wait += e.wait;
	a->edge.radio += e.radio;
	a->edge.total += e.total;
	a->edge.battery += e.battery;
	a->tenants++;
#define ADD(name, meaning) a->st.name += x->name;
	TENANT_COUNTERS(ADD)
	REQ_COUNTERS(ADD)
	REQ_ENERGY(ADD)
#undef ADD
	a->st.busy_s += x->busy_s;
	a->st.edge_busy_s += x->edge_busy_s;
	a->st.ttft_sum += x->ttft_sum;
	a->st.tpot_sum += x->tpot_sum;
	a->st.tpot_n += x->tpot_n;
	sk_merge(&a->st.itl, &x->itl);
	sk_merge(&a->st.ttft, &x->ttft);
	sk_merge(&a->st.tpot, &x->tpot);
	a->tput_sum += tput;
	a->tput_sq += tput * tput;
}

/* A figure that may not be known (NaN, and so the infinities of 0 / 0). */
static json_t *number_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* v, a figure of sketch k: NaN where k holds no sample */
static double sk_or_nan(const struct sketch *k, double v)
{
	return k->n ? v : NAN;
}

static json_t *quantiles(const struct sketch *k)
{
	return json_pack("{s:o,s:o,s:o,s:o,s:o,s:o}",
			 "mean", number_or_null(sk_or_nan(k, sk_mean(k))),
			 "p50", number_or_null(sk_or_nan(k, sk_quantile(k, 0.5))),
			 "p90", number_or_null(sk_or_nan(k, sk_quantile(k, 0.9))),
			 "p99", number_or_null(sk_or_nan(k, sk_quantile(k, 0.99))),
			 "p999", number_or_null(sk_or_nan(k,
						sk_quantile(k, 0.999))),
			 "max", number_or_null(sk_or_nan(k, k->max)));
}

static double ratio(double a, double b)
{
	return b > 0 ? a / b : 0;
}

/* A mean over things counted in b: unknown (NaN, so null) where there
 * were none, not 0 (a sweep would average a 0 in) */
static double per(double a, double b)
{
	return b > 0 ? a / b : NAN;
}

/* The figures of a group (and of "all") in summary.json: X(name, kind,
 * value, meaning), kind I an integer, F a number, N a number or null
 * (not known: no request finished, no draft compared, no power given), Q
 * quantiles (an object of mean, p50, p90, p99, p999 and max, each null
 * with no sample); values of the group's sums x, its aggregate a, its
 * tenant count n and the simulated seconds sim_s. */
#define GROUP_METRICS(X)                                                    \
	X(tenants, I, a->tenants, "tenants in the group")                   \
	X(requests, I, x->requests, "requests finished")                    \
	X(tokens, I, x->tokens, "output tokens committed")                  \
	X(ttft_s, Q, &x->ttft, "time to first token, s")                    \
	X(itl_s, Q, &x->itl, "inter-token latency: the gaps between "       \
	  "committed tokens of a request (0 between tokens one verdict "    \
	  "commits), s")                                                    \
	X(tpot_s, N, per(x->tpot_sum, (double)x->tpot_n),                 \
	  "time per output token after the first, mean over requests, s "   \
	  "(null: no request finished)")                                    \
	X(tpot_quantiles_s, Q, &x->tpot,                                    \
	  "time per output token after the first, over requests, s")        \
	X(tokens_per_s, F, ratio((double)x->tokens, sim_s),                 \
	  "output tokens per simulated second")                             \
	X(tokens_per_s_per_tenant, F, ratio(a->tput_sum, n),                \
	  "tokens per second of a tenant while it has a request, mean")     \
	X(alpha, N, per((double)x->accepted, (double)x->judged),            \
	  "share of compared draft positions accepted (null: none "         \
	  "compared)")                                                      \
	X(tokens_per_verdict, N, per((double)x->tokens,                     \
					(double)x->verdicts),               \
	  "tokens committed per verdict")                                   \
	X(wasted_draft_tokens, I, x->wasted,                                \
	  "draft tokens thrown away, never accepted")                       \
	X(wasted_per_token, N, per((double)x->wasted, (double)x->tokens),   \
	  "wasted draft tokens per output token")                           \
	X(bytes_up_per_token, N, per((double)x->bytes_up,                   \
					(double)x->tokens),                 \
	  "bytes sent from the edge per output token")                      \
	X(bytes_down_per_token, N, per((double)x->bytes_down,               \
					  (double)x->tokens),               \
	  "bytes sent to the edge per output token")                        \
	X(prompt_tokens_sent, I, x->prompt_sent,                            \
	  "prompt tokens sent to the cloud")                                \
	X(preemptions, I, x->preemptions,                                   \
	  "times the cloud preempted a request (its KV cache computed "     \
	  "again), of the requests finished")                               \
	X(handover_share, N, per((double)x->handed_over,                    \
				    (double)x->requests),                   \
	  "share of requests the cloud served first, then handed over")     \
	X(cloud_made_per_handover, N, per((double)x->cloud_made,            \
					     (double)x->handed_over),       \
	  "output tokens the cloud decoded before a handover, mean")        \
	X(catchup_per_request, N, per((double)x->catchup,                   \
					 (double)x->requests),              \
	  "tokens the edge prefilled to catch up with the cloud's, mean")   \
	X(handback_share, N, per((double)x->handed_back,                    \
				    (double)x->requests),                   \
	  "share of requests the edge handed back to the cloud")            \
	X(back_made_per_handback, N, per((double)x->back_made,              \
					    (double)x->handed_back),        \
	  "output tokens the cloud decoded after a hand-back, mean")        \
	X(slo_attainment, N, per((double)x->slo_met, (double)x->requests),  \
	  "share of requests that met both SLOs (null: no request "         \
	  "finished)")                                                      \
	X(ttft_attainment, N, per((double)x->ttft_met, (double)x->requests),\
	  "share of requests that met the TTFT SLO")                        \
	X(tpot_attainment, N, per((double)x->tpot_met, (double)x->requests),\
	  "share of requests that met the TPOT SLO")                        \
	X(goodput_tokens_per_s, F, ratio((double)x->slo_tokens, sim_s),     \
	  "tokens per second of the requests that met both SLOs")           \
	X(jain_fairness, N, per(a->tput_sum * a->tput_sum, n * a->tput_sq), \
	  "Jain's index of the tenants' tokens/s (1: all equal)")           \
	X(edge_busy_fraction, F, ratio(x->edge_busy_s, n * sim_s),          \
	  "share of the run an edge device computes (drafting, prefilling)," \
	  " over the tenants: times the tenants, the processors they keep " \
	  "busy")                                                          \
	X(edge_j, N, a->edge.total, "joules the edge devices spent on the " \
	  "requests: computing, prefilling, waiting and the radio")        \
	X(edge_j_per_request, N, a->edge.total / (double)x->requests,       \
	  "edge joules per answer (a finished request): its computing, "   \
	  "prefilling, waiting and radio")                                 \
	X(battery_pct_per_request, N, 100 * a->edge.battery / 3600 /        \
	  (double)x->requests, "battery drained per answer, % (null: no "   \
	  "battery given)")                                                \
	X(edge_j_per_token, N, a->edge.total / tok,                         \
	  "edge joules per output token")                                  \
	X(edge_compute_j_per_token, N, a->edge.compute / tok,               \
	  "of which computing tokens (drafting; all of them in edge_only)") \
	X(edge_prefill_j_per_token, N, a->edge.prefill / tok,               \
	  "of which prefilling prompts on the edge")                       \
	X(edge_wait_j_per_token, N, a->edge.wait / tok,                     \
	  "of which waiting, a request open, at the idle power")           \
	X(radio_j_per_token, N, a->edge.radio / tok,                        \
	  "of which the radio: transfers and their tails")                 \
	X(battery_pct_per_hour, N, 100 * a->edge.battery / x->busy_s,       \
	  "battery drained per hour with a request open, % (null: no "      \
	  "battery given; short requests spread a radio's tail: compare "  \
	  "per answer)")                                                   \
	X(cloud_j, N, a->cloud_j, "joules of the cloud's GPUs, the "        \
	  "group's share (by GPU-seconds of its work)")                    \
	X(cloud_j_per_token, N, a->cloud_j / tok,                           \
	  "cloud joules per output token")                                 \
	X(j_per_token, N, (a->edge.total + a->cloud_j) / tok,               \
	  "edge and cloud joules per output token")                        \
	X(gpu_hours_per_1000_tenants, N, a->gpu_h * 1000 / n,               \
	  "provisioned GPU-hours of the run, the group's share, per 1,000 " \
	  "tenants")                                                       \
	X(usd_per_mtok, N, a->usd / tok * 1e6,                              \
	  "dollars per million output tokens: the provisioned GPUs' hours " \
	  "at the price a GPU-hour, the group's share")

#define METRIC_I(v) json_integer((json_int_t)(v))
#define METRIC_F(v) json_real(v)
#define METRIC_Q(v) quantiles(v)
#define METRIC_N(v) number_or_null(v)

static json_t *agg_json(const struct agg *a, double sim_s)
{
	const struct tenant_stat *x = &a->st;
	double n = (double)a->tenants, tok = (double)x->tokens;
	json_t *o = json_object();

#define SET(name, kind, value, meaning)                                    \
	json_object_set_new(o, #name, METRIC_##kind(value));
	GROUP_METRICS(SET)
#undef SET
	return o;
}

/* What the cloud's GPUs cost over the measured sim_s seconds: provisioned
 * GPU-hours, joules and dollars (NaN where the power or the price is not
 * known); all 0 when no group sends work to the cloud. */
struct bill {
	double gpus, gpu_h, busy_gpu_s, j, usd;
};

static struct bill cloud_bill(const struct sim *s, double sim_s)
{
	const struct cfg_cloud *cl = &s->cfg->cloud;
	const struct gpu_spec *g = &cl->gpu.spec;
	struct bill b = { 0 };
	bool used = false;

	for (size_t i = 0; i < s->cfg->n_groups; i++)
		used |= s->cfg->groups[i].proto.caps.uses_cloud;
	if (!used)
		return b;
	b.gpus = (double)s->n_replicas * cl->tp;
	b.gpu_h = b.gpus * sim_s / 3600;
	for (uint32_t i = 0; i < s->n_replicas; i++)
		b.busy_gpu_s += s->r[i].busy_s * cl->tp;
	b.j = g->power_idle_w > 0 && g->power_max_w > 0
		      ? energy_gpu_j(g->power_idle_w, g->power_max_w, b.gpus,
				     sim_s, b.busy_gpu_s)
		      : NAN;
	b.usd = g->usd_per_hour > 0 ? g->usd_per_hour * b.gpu_h : NAN;
	return b;
}

/* The cloud: the GPU's name and count, busy share, achieved bandwidth and
 * FLOP/s, MBU, MFU, batches and their tokens, the wait of ready work for an
 * iteration (queue_wait_s) and of a request's prompt for KV-cache
 * admission (admission_wait_s), stale and discarded blocks, the most
 * requests admitted at once on a replica; what it costs (the bill). */
static json_t *cloud_json(const struct sim *s, double sim_s,
			  const struct bill *b)
{
	const struct gpu_spec *g = &s->cfg->cloud.gpu.spec;
	struct sketch bt, qw, aw;
	double busy = 0, bytes = 0, flops = 0;
	uint64_t batches = 0, tokens = 0, peak = 0, preempt = 0;
	int64_t peak_blocks = 0;
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
		if (r->kv.peak > peak_blocks)
			peak_blocks = r->kv.peak;
		preempt += r->preemptions;
		sk_merge(&bt, &r->batch_tokens);
		sk_merge(&qw, &r->queue_wait);
		sk_merge(&aw, &r->admit_wait);
	}
	j = json_pack("{s:s,s:s,s:I,s:f,s:f,s:f,s:f,s:f,s:I,s:I,s:o,s:o,s:o,s:I,"
		      "s:I,s:I}",
		      "gpu", s->cost.gpu, "pricing", cost_pricing(&s->cost),
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
	/* the KV cache: its policy, a replica's pool and its fullest, the
	 * preemptions after the warm-up */
	json_object_set_new(j, "kv", json_pack("{s:s,s:I,s:I,s:I,s:f,s:I}",
		"policy", cfg_kv_names[s->cfg->cloud.kv_policy],
		"block_tokens", (json_int_t)s->cfg->cloud.block_tokens,
		"blocks_per_replica", (json_int_t)s->kv_blocks,
		"peak_blocks", (json_int_t)peak_blocks,
		"peak_share", ratio((double)peak_blocks, (double)s->kv_blocks),
		"preemptions", (json_int_t)preempt));
	json_object_set_new(j, "gpu_hours", json_real(b->gpu_h));
	json_object_set_new(j, "energy_j", number_or_null(b->j));
	json_object_set_new(j, "mean_power_w_per_gpu",
			    number_or_null(b->j / (b->gpus * sim_s)));
	json_object_set_new(j, "usd_per_gpu_hour",
			    number_or_null(g->usd_per_hour > 0 ? g->usd_per_hour
							       : NAN));
	json_object_set_new(j, "usd", number_or_null(b->usd));
	json_object_set_new(j, "gpu_sources", json_pack("{s:s?,s:s?}",
		"datasheet", g->source, "idle_power_and_price", g->market));
	return j;
}

/* The aggregate's share of the cloud's bill. */
static void agg_bill(struct agg *a, const struct bill *b, double share)
{
	a->cloud_j = share * b->j;
	a->usd = share * b->usd;
	a->gpu_h = share * b->gpu_h;
}

static void agg_init(struct agg *a)
{
	memset(a, 0, sizeof(*a));
	sk_init(&a->st.itl);
	sk_init_exact(&a->st.ttft);
	sk_init_exact(&a->st.tpot);
}

static void agg_release(struct agg *a)
{
	sk_release(&a->st.itl);
	sk_release(&a->st.ttft);
	sk_release(&a->st.tpot);
}

/* The steady window: from when every tenant has made its first request
 * (and the warm-up is over) to when the first has made its last (or the
 * run's end), in whole bins of simulated time (seconds in a run of up
 * to 12 days: sim.h's SIM_BINS_MAX): the workload's whole load is on. Over it,
 * the tokens a second, the GPUs' busy share and the cost of a token; it
 * is steady when it spans half the measured run or more. */
static json_t *steady_json(const struct sim *s, const struct bill *b)
{
	const struct cfg *c = s->cfg;
	const struct gpu_spec *g = &c->cloud.gpu.spec;
	double from = c->warmup_s, to = s->end_s, tok = 0, gpu_s = 0, len;
	double run = s->end_s - (s->end_s > c->warmup_s ? c->warmup_s : 0);
	double gpu_h, cloud_j;
	size_t lo, hi;

	for (uint32_t i = 0; i < s->n_tenants; i++) {
		const struct tenant *t = &s->t[i];

		if (t->issued && t->first_arrive_s > from)
			from = t->first_arrive_s;
		if (t->issued_all && t->last_arrive_s < to)
			to = t->last_arrive_s;
	}
	lo = (size_t)ceil(from / s->bin_s);
	hi = to > 0 ? (size_t)floor(to / s->bin_s) : 0;
	if (hi > s->n_bins)
		hi = s->n_bins;
	len = hi > lo ? (double)(hi - lo) * s->bin_s : 0;
	for (size_t k = lo; k < hi; k++) {
		tok += s->bin_tokens[k];
		gpu_s += s->bin_gpu_s[k];
	}
	/* the provisioned GPU-hours a million tokens; their price and the
	 * GPUs' joules follow (the edge's joules are its requests', whatever
	 * the window) */
	gpu_h = !(tok > 0) ? NAN : b->gpus > 0 ? b->gpus * len / 3600 / tok * 1e6
						: 0; /* no cloud GPU in use */
	cloud_j = b->gpus == 0 ? 0 /* a run that never uses the cloud */
		: len > 0 && g->power_idle_w > 0 && g->power_max_w > 0
		? energy_gpu_j(g->power_idle_w, g->power_max_w, b->gpus, len,
			       gpu_s) : NAN;
	return json_pack("{s:b,s:f,s:f,s:f,s:o,s:o,s:o,s:o,s:o}",
			 "steady", len >= 1 && len >= run / 2,
			 "from_s", fmin((double)lo * s->bin_s, s->end_s), "to_s",
			 fmin((double)(len > 0 ? hi : lo) * s->bin_s, s->end_s),
			 "share_of_run", ratio(len, run),
			 "tokens_per_s", number_or_null(len > 0 ? tok / len : NAN),
			 "gpu_busy_fraction", number_or_null(
				 len > 0 && b->gpus > 0 ? gpu_s / (b->gpus * len)
							: NAN),
			 "usd_per_mtok", number_or_null(
				 gpu_h == 0 || g->usd_per_hour > 0
				 ? g->usd_per_hour * gpu_h : NAN),
			 "gpu_hours_per_mtok", number_or_null(gpu_h),
			 "cloud_j_per_token", number_or_null(
				 tok > 0 ? cloud_j / tok : NAN));
}

json_t *rep_summary(const struct sim *s)
{
	const struct cfg *c = s->cfg;
	json_t *groups = json_array();
	struct agg all;
	/* rates and shares are of the measured window, after the warm-up */
	double sim_s = s->end_s - (s->end_s > c->warmup_s ? c->warmup_s : 0);
	struct bill bill = cloud_bill(s, sim_s);
	double gpu_s = 0;

	for (size_t g = 0; g < c->n_groups; g++)
		gpu_s += s->group_gpu_s[g];

	agg_init(&all);
	for (size_t g = 0; g < c->n_groups; g++) {
		struct agg a;
		json_t *j;

		agg_init(&a);
		for (uint32_t i = s->group_first[g]; i < s->group_first[g + 1]; i++) {
			agg_add(&a, &c->groups[g], &s->t[i]);
			agg_add(&all, &c->groups[g], &s->t[i]);
		}
		agg_bill(&a, &bill, ratio(s->group_gpu_s[g], gpu_s));
		j = agg_json(&a, sim_s);
		json_object_set_new(j, "name", json_string(c->groups[g].name));
		json_object_set_new(j, "protocol",
				    json_string(cfg_proto_names[c->groups[g].proto.kind]));
		json_object_set_new(j, "acceptance",
				    json_string(c->groups[g].accept.source));
		json_object_set_new(j, "radio",
				    json_string(c->groups[g].wan.radio.name));
		json_array_append_new(groups, j);
		agg_release(&a);
	}
	agg_bill(&all, &bill, 1);
	json_t *sum = json_pack("{s:s,s:I,s:f,s:I,s:I,s:o,s:o,s:o,s:{s:f,s:f}}",
				"name", c->name, "seed", (json_int_t)c->seed,
				"sim_time_s", s->end_s,
				"events", (json_int_t)s->events,
				"requests_done", (json_int_t)s->requests_done,
				"all", agg_json(&all, sim_s),
				"groups", groups,
				"cloud", cloud_json(s, sim_s, &bill),
				"slo", "ttft_s", c->slo.ttft_s, "tpot_s",
				c->slo.tpot_s);
	json_object_set_new(sum, "steady", steady_json(s, &bill));
	agg_release(&all);
	HS_ASSERT(sum != NULL);
	return sum;
}

/* The columns of tenants.csv, a row per tenant: X(name, printf format,
 * value, meaning), values of the tenant t, its statistics x, their
 * token count tok and its edge energy e. */
#define TENANT_CSV_COLUMNS(X)                                              \
	X(group, "%s", t->cfg->name, "the tenant's group")  \
	X(tenant, "%u", t->gindex, "the tenant's number in its group")     \
	X(requests, "%llu", (unsigned long long)x->requests,                \
	  "requests finished")                                             \
	X(tokens, "%llu", (unsigned long long)x->tokens,                    \
	  "output tokens committed")                                       \
	X(busy_s, "%.9g", x->busy_s, "time with a request in progress, s")  \
	X(tokens_per_s, "%.9g", ratio(tok, x->busy_s),                      \
	  "tokens per second while busy")                                  \
	X(ttft_mean_s, "%.9g", per(x->ttft_sum, (double)x->requests),       \
	  "time to first token, mean, s (nan: no request finished)")        \
	X(itl_mean_s, "%.9g", sk_or_nan(&x->itl, sk_mean(&x->itl)),         \
	  "inter-token latency, mean, s (nan: no gap)")                     \
	X(itl_p50_s, "%.9g", sk_or_nan(&x->itl, sk_quantile(&x->itl, 0.5)),  \
	  "inter-token latency, median, s")                                \
	X(itl_p99_s, "%.9g", sk_or_nan(&x->itl, sk_quantile(&x->itl, 0.99)), \
	  "inter-token latency, 99th percentile, s")                       \
	X(tpot_mean_s, "%.9g", per(x->tpot_sum, (double)x->tpot_n),       \
	  "time per output token after the first, mean over requests, s "   \
	  "(nan: no request finished)")                                    \
	X(alpha, "%.9g", per((double)x->accepted, (double)x->judged),       \
	  "share of compared draft positions accepted (nan: none compared)") \
	X(tokens_per_verdict, "%.9g", per(tok, (double)x->verdicts),        \
	  "tokens committed per verdict (nan: no verdict)")                \
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
	X(preemptions, "%llu", (unsigned long long)x->preemptions,          \
	  "times the cloud preempted its requests")                        \
	X(slo_met, "%llu", (unsigned long long)x->slo_met,                  \
	  "requests that met both SLOs")                                   \
	X(edge_compute_s, "%.9g", x->compute_s, "seconds the edge computed " \
	  "tokens")                                                        \
	X(edge_prefill_s, "%.9g", x->prefill_s, "seconds the edge "         \
	  "prefilled prompts")                                             \
	X(edge_compute_j, "%.9g", e.compute, "joules computing tokens (nan: " \
	  "the device's power not known)")                                 \
	X(edge_prefill_j, "%.9g", e.prefill, "joules prefilling")           \
	X(edge_wait_j, "%.9g", e.wait, "joules waiting with a request open")\
	X(radio_j, "%.9g", e.radio, "joules of the radio")                  \
	X(edge_j, "%.9g", e.total, "the edge's joules, all parts")          \
	X(edge_j_per_token, "%.9g", per(e.total, tok), "edge joules per "    \
	  "output token (nan: no token, or a power not known)")             \
	X(battery_pct_per_hour, "%.9g", 100 * e.battery / x->busy_s,        \
	  "battery drained per hour with a request open, % (nan: no "       \
	  "battery given)")

void rep_tenants_csv(const struct sim *s, FILE *f)
{
	const char *sep = "";

	TENANT_CSV_COLUMNS(CSV_NAME)
	fputc('\n', f);
	for (uint32_t i = 0; i < s->n_tenants; i++) {
		const struct tenant *t = &s->t[i];
		const struct tenant_stat *x = &t->st;
		double tok = (double)x->tokens;
		struct edge_j e = edge_energy(t->cfg, x);

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
	fprintf(f, "  %-22s %s\n", "radio", "the edge's radio (its energy "
		"a bit)");
	fputs("summary.json, /steady: the window from when every tenant has "
	      "made its first request\n(and the warm-up is over) to when the "
	      "first has made its last, whole seconds:\n", f);
	fprintf(f, "  %-22s %s\n", "steady", "true when it spans half the "
		"measured run or more (else ramp and drain weigh on the rates)");
	fprintf(f, "  %-22s %s\n", "from_s, to_s", "the window");
	fprintf(f, "  %-22s %s\n", "share_of_run", "its share of the measured "
		"run");
	fprintf(f, "  %-22s %s\n", "tokens_per_s", "tokens committed in it a "
		"second");
	fprintf(f, "  %-22s %s\n", "gpu_busy_fraction", "the GPUs' busy share "
		"in it (iterations begun in it)");
	fprintf(f, "  %-22s %s\n", "usd_per_mtok", "the provisioned GPUs' cost "
		"over it a million tokens (null: no price)");
	fprintf(f, "  %-22s %s\n", "gpu_hours_per_mtok", "provisioned GPU-hours "
		"over it a million tokens");
	fprintf(f, "  %-22s %s\n", "cloud_j_per_token", "the GPUs' joules over "
		"it a token (null: a power not known; an edge's joules are its "
		"requests', in /all)");
	fputs("summary.json, /cloud (quantiles as /all's: mean, p50, p90, "
	      "p99, p999, max):\n", f);
	{
		static const char *const rows[][2] = {
			{ "gpu, pricing", "the GPU and what priced its "
			  "iterations (measured tables, derived, roofline)" },
			{ "gpus", "GPUs provisioned: replicas x tp" },
			{ "busy_fraction", "the replicas' share of time "
			  "running an iteration" },
			{ "achieved_bytes_per_s, achieved_flops", "memory and "
			  "arithmetic rates while busy" },
			{ "mbu, mfu", "those over the GPU's peaks" },
			{ "batches, batch_tokens_total", "iterations and "
			  "their tokens" },
			{ "batch_tokens", "tokens an iteration (quantiles)" },
			{ "queue_wait_s", "a work item's wait from its queueing "
			  "to its iteration, s (quantiles)" },
			{ "admission_wait_s", "a request's wait from its prompt "
			  "to KV blocks for it, s (quantiles; preempted ones "
			  "left out)" },
			{ "stale_blocks_dropped", "draft blocks dropped as "
			  "stale (drafted before a rejection the edge had not "
			  "yet heard of)" },
			{ "segment_blocks_discarded", "blocks computed after a "
			  "rejection in the same verified segment, not judged" },
			{ "peak_active_per_gpu", "the most requests admitted "
			  "at once on a replica" },
			{ "gpu_hours", "GPU-hours provisioned" },
			{ "energy_j, mean_power_w_per_gpu", "the GPUs' energy "
			  "and mean draw (null: a power not known)" },
			{ "usd_per_gpu_hour, usd", "the GPU's price and the "
			  "bill (null: no price)" },
			{ "gpu_sources", "where the datasheet, the idle draw "
			  "and the price come from" },
			{ "tp", "GPUs a replica (absent at one)" },
		};

		for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
			fprintf(f, "  %-22s %s\n", rows[i][0], rows[i][1]);
	}
	fputs("summary.json, top level:\n", f);
	fprintf(f, "  %-22s %s\n", "name, seed, slo", "the config's");
	fprintf(f, "  %-22s %s\n", "sim_time_s, events", "simulated time and "
		"events handled");
	fprintf(f, "  %-22s %s\n", "requests_done", "requests finished in all");
	fputs("summary.json, /cloud/kv: the KV cache:\n", f);
	fprintf(f, "  %-22s %s\n", "policy", "paged or reserve");
	fprintf(f, "  %-22s %s\n", "block_tokens, blocks_per_replica",
		"its blocks and a replica's pool");
	fprintf(f, "  %-22s %s\n", "peak_blocks, peak_share", "the fullest a "
		"replica's pool was, and its share");
	fprintf(f, "  %-22s %s\n", "preemptions", "requests preempted (recompute) "
		"after the warm-up");
	fputs("requests.csv, a row per finished request:\n", f);
	REQ_CSV_COLUMNS(DOC)
	fputs("tenants.csv, a row per tenant:\n", f);
	TENANT_CSV_COLUMNS(DOC)
#undef DOC
}

/* The figure at a dotted path in o ("ttft_s.p50"), or NULL. */
static const json_t *at(const json_t *o, const char *path)
{
	char key[64];
	const char *dot = strchr(path, '.');

	if (!dot)
		return json_object_get(o, path);
	snprintf(key, sizeof(key), "%.*s", (int)(dot - path), path);
	return at(json_object_get(o, key), dot + 1);
}

static double num(const json_t *o, const char *path)
{
	return json_number_value(at(o, path));
}

/* A printed table's columns: the heading, the figure's place in a
 * group's summary, the scale to the unit shown, the format, and what it
 * means (the legend). */
struct column {
	const char *head, *path;
	double scale;
	const char *fmt, *meaning;
};

static const struct column latency[] = {
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

static const struct column spend_cols[] = {
	{ "edge_J/ans", "edge_j_per_request", 1, "%10.2f",
	  "edge energy per answer (a finished request), J (-: a power not "
	  "known)" },
	{ "batt%/ans", "battery_pct_per_request", 1, "%9.4f",
	  "battery drained per answer, % (-: none given)" },
	{ "edge_mJ/t", "edge_j_per_token", 1e3, "%10.1f",
	  "edge energy per output token, mJ (-: a power not known)" },
	{ "comp_mJ", "edge_compute_j_per_token", 1e3, "%9.1f",
	  "of which computing tokens (drafting), mJ a token" },
	{ "pref_mJ", "edge_prefill_j_per_token", 1e3, "%9.1f",
	  "of which prefilling the prompt on the edge, mJ a token" },
	{ "wait_mJ", "edge_wait_j_per_token", 1e3, "%9.1f",
	  "of which waiting with a request open, mJ a token" },
	{ "radio_mJ", "radio_j_per_token", 1e3, "%9.2f",
	  "of which the radio, mJ a token" },
	{ "cloud_mJ", "cloud_j_per_token", 1e3, "%9.1f",
	  "cloud GPU energy per output token, the group's share, mJ" },
	{ "$/Mtok", "usd_per_mtok", 1, "%8.3f",
	  "dollars per million output tokens (provisioned GPUs, their price)" },
	{ "GPUh/1k", "gpu_hours_per_1000_tenants", 1, "%8.3f",
	  "provisioned GPU-hours of the run per 1,000 tenants" },
};
#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* a column's width: its format's, e.g. 9 of "%9.3f" */
static int col_width(const struct column *c)
{
	return atoi(c->fmt + 1);
}

static void print_head(FILE *f, const struct column *c, size_t n)
{
	fprintf(f, "%-14s %-10s", "group", "protocol");
	for (size_t i = 0; i < n; i++)
		fprintf(f, " %*s", col_width(&c[i]), c[i].head);
	fputc('\n', f);
}

static void print_row(FILE *f, const struct column *c, size_t n,
		      const char *name, const char *proto, const json_t *g)
{
	fprintf(f, "%-14s %-10s", name, proto);
	for (size_t i = 0; i < n; i++) {
		const json_t *v = at(g, c[i].path);

		fputc(' ', f);
		if (json_is_number(v))
			fprintf(f, c[i].fmt, c[i].scale * json_number_value(v));
		else
			fprintf(f, "%*s", col_width(&c[i]), "-");
	}
	fputc('\n', f);
}

/* A table of the groups (and of all of them, where more than one). */
static void print_table(FILE *f, const struct column *c, size_t n,
			const json_t *sum)
{
	const json_t *groups = json_object_get(sum, "groups");

	print_head(f, c, n);
	for (size_t i = 0; i < json_array_size(groups); i++) {
		const json_t *g = json_array_get(groups, i);

		print_row(f, c, n, json_string_value(json_object_get(g, "name")),
			  json_string_value(json_object_get(g, "protocol")), g);
	}
	if (json_array_size(groups) > 1)
		print_row(f, c, n, "all", "", json_object_get(sum, "all"));
}

void rep_legend(FILE *f)
{
	for (size_t i = 0; i < N_OF(latency); i++)
		fprintf(f, "  %-9s %s\n", latency[i].head, latency[i].meaning);
	for (size_t i = 0; i < N_OF(spend_cols); i++)
		fprintf(f, "  %-9s %s\n", spend_cols[i].head, spend_cols[i].meaning);
	fprintf(f, "  ITL p50 can be 0: a verdict commits its accepted tokens "
		   "together, and the gaps\n  between them are 0. cloud: stale "
		   "blocks dropped are async blocks drafted\n  before a "
		   "rejection, dropped unverified at the cloud.\n  TTFT and "
		   "TPOT percentiles are exact (to 4 million requests a group); "
		   "ITL's\n  within 1%% of the exact ones (a log-bucket sketch: "
		   "gaps closer than that\n  may share one).\n");
}

void rep_print(const json_t *sum, FILE *f)
{
	const json_t *cl = json_object_get(sum, "cloud");
	char tp[64] = "";

	print_table(f, latency, N_OF(latency), sum);
	if (json_object_get(cl, "tp"))
		snprintf(tp, sizeof(tp), " (tp %.0f a replica)", num(cl, "tp"));
	fprintf(f, "cloud: %s x %.0f%s, busy %.1f%%, MBU %.1f%%, MFU %.1f%%, "
		"batch %.1f tokens (p99 %.0f), queue wait p99 %.2f ms, stale "
		"blocks dropped %.0f\n",
		json_string_value(json_object_get(cl, "gpu")), num(cl, "gpus"), tp,
		100 * num(cl, "busy_fraction"), 100 * num(cl, "mbu"),
		100 * num(cl, "mfu"), num(cl, "batch_tokens.mean"),
		num(cl, "batch_tokens.p99"), 1e3 * num(cl, "queue_wait_s.p99"),
		num(cl, "stale_blocks_dropped"));
	fprintf(f, "cloud KV: %s, %.0f blocks of %.0f tokens a replica, "
		"fullest %.1f%%, admission wait p99 %.3g s, preemptions %.0f\n",
		json_string_value(at(cl, "kv.policy")),
		num(cl, "kv.blocks_per_replica"), num(cl, "kv.block_tokens"),
		100 * num(cl, "kv.peak_share"), num(cl, "admission_wait_s.p99"),
		num(cl, "kv.preemptions"));
	fprintf(f, "cloud cost: %s\n",
		json_string_value(json_object_get(cl, "pricing")));
	fprintf(f, "run: %.3f s simulated, %.0f events, goodput %.1f tokens/s, "
		"Jain fairness ", num(sum, "sim_time_s"), num(sum, "events"),
		num(sum, "all.goodput_tokens_per_s"));
	if (json_is_number(at(sum, "all.jain_fairness")))
		fprintf(f, "%.3f\n", num(sum, "all.jain_fairness"));
	else
		fputs("- (no tenant made a token)\n", f);
	fprintf(f, "steady window: %.0f-%.0f s, %.0f%% of the run%s: %.1f "
		"tokens/s, GPU busy ", num(sum, "steady.from_s"),
		num(sum, "steady.to_s"), 100 * num(sum, "steady.share_of_run"),
		json_is_true(at(sum, "steady.steady")) ? "" : " (not steady: "
		"ramp and drain take half of it)", num(sum, "steady.tokens_per_s"));
	if (json_is_number(at(sum, "steady.gpu_busy_fraction")))
		fprintf(f, "%.1f%%, ", 100 * num(sum, "steady.gpu_busy_fraction"));
	else
		fputs("-, ", f);
	if (json_is_number(at(sum, "steady.usd_per_mtok")))
		fprintf(f, "$%.3f a million tokens%s\n",
			num(sum, "steady.usd_per_mtok"),
			num(sum, "steady.gpu_hours_per_mtok") == 0
			? " (no cloud GPU serves them)" : "");
	else
		fprintf(f, "$- a million tokens (%s)\n",
			!(num(sum, "steady.tokens_per_s") > 0)
			? "no token in the window" : "no price");
	fputs("energy and cost:\n", f);
	print_table(f, spend_cols, N_OF(spend_cols), sum);
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
