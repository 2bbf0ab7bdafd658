/* sim.c: the events of the hybrid serving model and what each one does.
 *
 * Invariants, per tenant with a request in progress:
 *  - rq.committed <= rq.n_out: a token is committed once, never past the end;
 *  - edge.ahead = tokens in edge.inflight blocks + edge.draft_g if
 *    drafting; all of them belong to edge.epoch, and committed + ahead <=
 *    n_out;
 *  - edge.inflight holds at most window blocks, oldest first;
 *  - the cloud verifies only blocks of its current epoch (cloud.epoch);
 *    older ones are dropped unverified when they arrive or reach the head;
 *  - a verdict that reaches a drafting edge waits in the downlink for the
 *    forward pass in progress to end (EV_DOWN_HELD), as a real edge reads
 *    its socket only between passes;
 *  - a handover start: edge.prefilling iff its EV_EDGE_PREFILL is pending,
 *    and rq.prefill_s counts a prefill's seconds as they pass (one cut
 *    short by the request's end counts up to then); no block is drafted
 *    while edge.starting; READY goes up once, from an edge not
 *    prefilling; cloud.decoding and cloud.stop_next hold only while the
 *    cloud serves the request itself; cloud.ready_later only while an
 *    iteration of it is in progress (READY came during it);
 *  - a hand-back: no block is drafted once edge.handing_back; BACK goes up
 *    once, when no block is in flight (rq.handed_back), and the cloud,
 *    then holding no block of the request, decodes it to its end.
 * A replica is busy while EV_BATCH is pending; its batch[] lists the items of
 * that iteration. Each tenant is at most once in a replica's ready FIFO and
 * once in its prefill FIFO. */
#include "sim.h"

#include "adapt.h"
#include "formula.h"
#include "rng.h"
#include "mem.h"

#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum ev_kind {
	EV_ARRIVE,       /* a request arrives at the tenant */
	EV_EDGE_PREFILL, /* the edge finished prefilling the prompt */
	EV_DRAFT,        /* the block being drafted is done */
	EV_EDGE_TOKEN,   /* edge-only: one token generated */
	EV_UP,           /* the oldest uplink message reaches the cloud */
	EV_DOWN,         /* the oldest downlink message reaches the edge */
	EV_DOWN_HELD,    /* the edge's forward pass ends: the EV_DOWN held
			    for it is handled */
	EV_BATCH,        /* a replica's iteration ends (id: replica) */
	EV_WINDOW,       /* a replica's batching window closes (id: replica) */
};

enum msg_kind {
	MSG_PROMPT,  /* up: a: prompt tokens, b: output tokens wanted */
	MSG_BLOCK,   /* up: a: draft tokens g, b: output position of the first */
	MSG_DONE,    /* up: the request is finished, free its KV cache */
	MSG_VERDICT, /* down: a: blocks verified << 32 | fully accepted, b: k */
	MSG_TOKEN,   /* down: a: tokens the cloud made (cloud_only: one;
			cloud_spec: a verdict's); b: 1 when the cloud hands the
			request over after it (a handover start) */
	MSG_READY,   /* up: a handover start's edge holds the prompt and a
			output tokens in its draft cache */
	MSG_BACK,    /* up: a hand-back: the cloud decodes from output
			position a on */
};

static const char *const msg_names[] = { "prompt", "block", "done",
					 "verdict", "token", "ready", "back" };


/* Whether what happens now joins the statistics: after the warm-up. */
static bool measured(const struct sim *s)
{
	return s->q.now_s >= s->cfg->warmup_s;
}

/* The seconds of [from_s, to_s) after the warm-up */
static double measured_s(const struct sim *s, double from_s, double to_s)
{
	return fmax(0, to_s - fmax(from_s, s->cfg->warmup_s));
}

/* The edge computed (or prefilled) from from_s to now: *spent, its
 * request's, takes it whole, the tenant's edge_busy_s the part after the
 * warm-up. */
static void spend_edge(struct sim *s, struct tenant *t, double *spent,
		       double from_s)
{
	*spent += s->q.now_s - from_s;
	t->st.edge_busy_s += measured_s(s, from_s, s->q.now_s);
}

/* An event's time as the queue takes it: past SIM_TIME_MAX_S (infinite,
 * or NaN, from a cost out of scale) a finite time past it, where the loop
 * stops the run with its message. */
static double when(double t_s)
{
	return t_s <= SIM_TIME_MAX_S ? t_s : 2 * SIM_TIME_MAX_S;
}

static void push(struct sim *s, double t_s, enum ev_kind k, uint32_t id)
{
	eq_post(&s->q, when(t_s), 0, (struct eq_event){ .kind = k, .id = id });
}

/* ---- the trace (Chrome/Perfetto JSON) ---- */

static bool traced(const struct sim *s, uint32_t tenant)
{
	return s->opt.trace && tenant < s->opt.trace_tenants;
}

/* ---- costs of the edge ---- */

/* Seconds to draft g tokens, the first at context ctx0. */
static double draft_s(const struct cfg_device *d, int32_t ctx0, int32_t g)
{
	return g * d->draft_base_s +
	       d->draft_per_ctx_s * ((double)g * ctx0 + (double)g * (g - 1) / 2);
}

/* Whole tokens of the block being drafted finished by time now, at most
 * the block's (e->draft_g), and when the forward pass in progress ends
 * (*pass_end_s, unless NULL; with the block done, when its last ended). */
static int32_t drafted_by(const struct tenant_edge *e,
			  const struct cfg_device *d, double now_s,
			  double *pass_end_s)
{
	int32_t n = 0;
	double t = e->draft_start_s + e->draft_lead_s;

	for (; n < e->draft_g; n++) {
		t += d->draft_base_s + d->draft_per_ctx_s * (e->draft_ctx0 + n);
		if (t > now_s) {
			if (pass_end_s)
				*pass_end_s = t;
			return n;
		}
	}
	if (pass_end_s)
		*pass_end_s = t;
	return n;
}

/* ---- prefetching: at 10^5 tenants their state does not fit the cache ---- */

/* on_batch asks for an item's pointers this many items ahead, and for its
 * tenant's state twice as far */
#define PREFETCH_AHEAD 2

/* Asks the cache for the tenant's state that its events touch (every line
 * the TENANT_HOT bytes overlap), so that a step soon does not wait for
 * memory. Always inlined: a function that only prefetches has no
 * effect GCC can see, and it drops a call to one (the prefetches of
 * d0891d5 never ran). */
static inline __attribute__((always_inline)) void
prefetch_state(const struct tenant *t)
{
#pragma GCC unroll 24 /* a prefetch an instruction, not a loop around one */
	for (size_t off = 0; off < TENANT_HOT + 63; off += 64)
		__builtin_prefetch((const char *)t + off);
}

/* Asks for what the tenant's state points to (the state asked for a step
 * earlier): the heads of its queues. */
static inline __attribute__((always_inline)) void
prefetch_pointees(const struct tenant *t)
{
	if (t->up.q.n)
		__builtin_prefetch(link_ring_at(&t->up.q, 0));
	if (t->down.q.n)
		__builtin_prefetch(link_ring_at(&t->down.q, 0));
	if (t->cloud.cq.n)
		__builtin_prefetch(blk_ring_at(&t->cloud.cq, 0));
}

/* The tenant of the event ev, if any (a replica's event has none). */
static const struct tenant *tenant_of(const struct sim *s,
				      const struct eq_event *ev)
{
	return ev && ev->kind != EV_BATCH && ev->kind != EV_WINDOW
		       ? &s->t[ev->id] : NULL;
}

/* ---- the links ---- */

/* The edge's radio sends or receives bytes now: its energy joins the
 * request in progress, or the tenant's sums when none is (a late
 * message). */
static void radio_charge(struct sim *s, struct tenant *t, uint32_t bytes,
			 bool up)
{
	const struct cfg_wan *w = &t->cfg->wan;
	double j = radio_transfer_j(&w->radio, &t->radio_on_s, s->q.now_s,
				    bytes, up ? w->up_bps : w->down_bps, up);

	if (t->busy)
		t->rq.radio_j += j;
	else if (measured(s))
		t->st.radio_j += j;
}

static void send(struct sim *s, struct tenant *t, bool up, uint32_t kind,
		 int64_t a, int64_t b, int32_t tokens)
{
	const struct cfg_wan *w = &t->cfg->wan;
	double now = s->q.now_s;
	double one_way = dist_sample(cfg_wan_rtt(w, now), &t->net_rng.gen) / 2 +
			 w->stack_s;
	int losses = 0;
	struct link_msg m = {
		.kind = kind, .epoch = t->edge.epoch, .a = a, .b = b,
		.bytes = (uint32_t)(w->header_bytes + LINK_APP_HEADER_BYTES +
				    LINK_TOKEN_BYTES * tokens),
	};
	double at;

	if (w->loss > 0)
		losses = (int)gsl_ran_geometric(&t->net_rng.gen,
						1 - w->loss) - 1;
	at = link_send(up ? &t->up : &t->down, cfg_wan_leave_s(w, now), one_way,
		       losses, w->rto_s, m);
	if (up) {
		t->rq.bytes_up += m.bytes;
		radio_charge(s, t, m.bytes, true);
	} else {
		t->rq.bytes_down += m.bytes;
	}
	if (traced(s, t->id))
		trace_span(s->opt.trace, up ? TRACE_UP : TRACE_DOWN,
			   t->id, msg_names[kind], now, at,
			   "\"bytes\":%ld,\"tokens\":%ld", (long)m.bytes, tokens);
	push(s, at, up ? EV_UP : EV_DOWN, t->id);
}

/* ---- requests ---- */

static int32_t draw_len(const struct dist *d, gsl_rng *r)
{
	double v = round(dist_sample(d, r));

	return v < 1 ? 1 : v > WL_TOKENS_MAX ? (int32_t)WL_TOKENS_MAX
					     : (int32_t)v;
}

/* The next arrival of an open-loop or trace tenant, if any is left. */
static void schedule_arrival(struct sim *s, struct tenant *t)
{
	const struct cfg_workload *w = &t->cfg->workload;
	double now = s->q.now_s;

	switch (w->arrival) {
	case ARRIVAL_CLOSED:
		break; /* a closed-loop tenant asks again when it is done */
	case ARRIVAL_POISSON: {
		double at = rate_next_s(&w->rate, now, &t->work_rng.gen);

		if (t->issued < (uint64_t)w->requests && isfinite(at))
			push(s, at, EV_ARRIVE, t->id);
		break;
	}
	case ARRIVAL_TRACE: {
		const struct wl_row *row = wl_trace_row(&t->cfg->wl_trace,
							t->gindex, t->issued);

		if (row)
			push(s, row->arrive_s > now ? row->arrive_s : now,
			     EV_ARRIVE, t->id);
		break;
	}
	}
}

static void start_next(struct sim *s, struct tenant *t);

/* The edge prefills n tokens into its draft cache (the prompt, or in a
 * handover start the tokens the cloud streamed down meanwhile). */
static void edge_prefill(struct sim *s, struct tenant *t, int32_t n)
{
	const struct cfg_device *d = &t->cfg->device;
	double now = s->q.now_s;
	double done = now + d->prefill_base_s + d->prefill_per_token_s * n;

	if (traced(s, t->id))
		trace_span(s->opt.trace, TRACE_EDGE, t->id, "prefill", now, done,
			   "\"tokens\":%ld", n, 0);
	t->edge.prefilling = true;
	t->edge.prefill_start_s = now;
	t->edge.prefill_ev = eq_push(&s->q, when(done), 0, (struct eq_event){
		.kind = EV_EDGE_PREFILL, .id = t->id });
}

static void on_arrive(struct sim *s, struct tenant *t)
{
	const struct cfg_group *g = t->cfg;
	struct wl_row r = { .arrive_s = s->q.now_s };

	if (g->workload.arrival == ARRIVAL_TRACE) {
		const struct wl_row *row = wl_trace_row(&g->wl_trace, t->gindex,
							t->issued);

		r.prompt = row->prompt;
		r.output = row->output;
	} else {
		gsl_rng *rw = &t->work_rng.gen;

		r.prompt = draw_len(&g->workload.prompt_tokens, rw);
		r.output = draw_len(&g->workload.output_tokens, rw);
	}
	if (t->issued++ == 0)
		t->first_arrive_s = s->q.now_s;
	t->last_arrive_s = s->q.now_s;
	t->issued_all = g->workload.arrival == ARRIVAL_TRACE
		? !wl_trace_row(&g->wl_trace, t->gindex, t->issued)
		: t->issued >= (uint64_t)g->workload.requests;
	wl_ring_push(&t->pending, r);
	schedule_arrival(s, t);
	if (!t->busy)
		start_next(s, t);
}

static void start_next(struct sim *s, struct tenant *t)
{
	const struct cfg_group *g = t->cfg;
	struct wl_row r = wl_ring_pop(&t->pending);
	double now = s->q.now_s;

	t->busy = true;
	t->rq = (struct req_stat){
		.index = t->issued - 1 - t->pending.n, .arrive_s = r.arrive_s,
		.start_s = now, .prompt = r.prompt, .n_out = r.output,
	};
	sk_reset(&t->rq_itl);
	if (cfg_proto_drafts(&g->proto.caps)) /* numbered as on_arrive's */
		acc_request(&t->acc, t->rq.index * (uint64_t)g->count + t->gindex);
	t->edge.ahead = 0;
	t->edge.feed_bonus = false;
	HS_ASSERT(t->edge.inflight.n == 0 && !t->edge.drafting);
	if (g->proto.caps.uses_cloud) {
		if (measured(s))
			t->st.prompt_sent += (uint64_t)r.prompt;
		send(s, t, true, MSG_PROMPT, r.prompt, r.output, r.prompt);
	}
	t->edge.starting = g->proto.handover != HANDOVER_NEVER;
	t->edge.ask_again = false;
	t->edge.handing_back = false;
	t->edge.hb = (struct hb_est){ 0 };
	t->edge.kv_pos = 0;
	t->edge.backlog = INT32_MAX;
	if (g->proto.caps.uses_edge)
		edge_prefill(s, t, r.prompt);
}

/* A finished request's time to first token, and its time per output token
 * after the first (0 for one token). */
static double req_ttft_s(const struct req_stat *q)
{
	return q->first_s - q->arrive_s;
}

/* NaN for a request of one output token: it has no time per token after
 * the first, and meets any TPOT bound */
static double req_tpot_s(const struct req_stat *q)
{
	return q->n_out > 1 ? (q->done_s - q->first_s) / (q->n_out - 1) : NAN;
}

/* Whether it met its group's TTFT and TPOT bounds. */
static bool meets_ttft(const struct tenant *t, const struct req_stat *q)
{
	return req_ttft_s(q) <= t->cfg->slo.ttft_s;
}

static bool meets_tpot(const struct tenant *t, const struct req_stat *q)
{
	return q->n_out <= 1 || req_tpot_s(q) <= t->cfg->slo.tpot_s;
}

static bool meets_slo(const struct tenant *t, const struct req_stat *q)
{
	return meets_ttft(t, q) && meets_tpot(t, q);
}

static void write_request(struct sim *s, const struct tenant *t)
{
	const struct req_stat *q = &t->rq;
	FILE *f = s->opt.requests_csv;
	const char *sep = "";

	if (!f)
		return;
	REQ_CSV_COLUMNS(CSV_VALUE)
	fputc('\n', f);
}

static void count_request(struct sim *s, struct tenant *t);

static void finish_request(struct sim *s, struct tenant *t)
{
	const struct cfg_group *g = t->cfg;
	struct req_stat *q = &t->rq;
	double now = s->q.now_s;

	HS_ASSERT(q->committed == q->n_out);
	q->done_s = now;
	if (t->edge.prefilling) { /* the cloud made every token first */
		HS_ASSERT(eq_cancel(&s->q, t->edge.prefill_ev));
		t->edge.prefilling = false;
		spend_edge(s, t, &q->prefill_s, t->edge.prefill_start_s);
	}
	t->edge.starting = t->edge.ask_again = false;
	if (g->proto.caps.speculates)
		send(s, t, true, MSG_DONE, 0, 0, 0);
	if (measured(s))
		count_request(s, t);
	s->requests_done++;
	t->busy = false;
	if (g->workload.arrival == ARRIVAL_CLOSED) {
		if (t->issued < (uint64_t)g->workload.requests)
			push(s, now + dist_sample(&g->workload.think_s,
						  &t->work_rng.gen),
			     EV_ARRIVE, t->id);
	} else if (t->pending.n) {
		start_next(s, t);
	}
}

/* A finished request joins its tenant's statistics and requests.csv. */
static void count_request(struct sim *s, struct tenant *t)
{
	struct tenant_stat *st = &t->st;
	struct req_stat *q = &t->rq;
	double now = s->q.now_s, ttft = req_ttft_s(q), tpot = req_tpot_s(q);

	st->requests++;
	st->tokens += (uint64_t)q->n_out;
#define ADD(name, meaning) st->name += q->name;
	REQ_COUNTERS(ADD)
	REQ_ENERGY(ADD)
#undef ADD
	st->busy_s += now - q->start_s;
	st->ttft_sum += ttft;
	sk_add(&st->ttft, ttft);
	if (q->n_out > 1) {
		st->tpot_n++;
		st->tpot_sum += tpot;
		sk_add(&st->tpot, tpot);
	}
	st->ttft_met += meets_ttft(t, q);
	st->tpot_met += meets_tpot(t, q);
	if (meets_slo(t, q)) {
		st->slo_met++;
		st->slo_tokens += (uint64_t)q->n_out;
	}
	write_request(s, t);
}

/* The bin of time now (the arrays grown, or their bins merged in pairs
 * and widened, as time goes on). */
static size_t bin_of(struct sim *s, double now)
{
	size_t k;

	while (now / s->bin_s >= SIM_BINS_MAX) {
		for (size_t i = 0; i < s->n_bins; i += 2) {
			double tok = s->bin_tokens[i], gpu = s->bin_gpu_s[i];

			if (i + 1 < s->n_bins) {
				tok += s->bin_tokens[i + 1];
				gpu += s->bin_gpu_s[i + 1];
			}
			s->bin_tokens[i / 2] = tok;
			s->bin_gpu_s[i / 2] = gpu;
		}
		for (size_t i = (s->n_bins + 1) / 2; i < s->n_bins; i++)
			s->bin_tokens[i] = s->bin_gpu_s[i] = 0;
		s->n_bins = (s->n_bins + 1) / 2;
		s->bin_s *= 2;
	}
	k = (size_t)(now / s->bin_s);
	if (k >= s->bins_cap) {
		size_t cap = s->bins_cap ? s->bins_cap : 1024;

		while (cap <= k)
			cap *= 2;
		s->bin_tokens = xrealloc(s->bin_tokens, cap * sizeof(double));
		s->bin_gpu_s = xrealloc(s->bin_gpu_s, cap * sizeof(double));
		memset(s->bin_tokens + s->bins_cap, 0,
		       (cap - s->bins_cap) * sizeof(double));
		memset(s->bin_gpu_s + s->bins_cap, 0,
		       (cap - s->bins_cap) * sizeof(double));
		s->bins_cap = cap;
	}
	if (k + 1 > s->n_bins)
		s->n_bins = k + 1;
	return k;
}

/* gpus GPUs busy from from_s for dur_s: their GPU-seconds into the bins
 * the span overlaps, each its share (so no bin holds more than its
 * width of a GPU's time). */
static void busy_bins(struct sim *s, double from_s, double dur_s, double gpus)
{
	const double to_s = from_s + dur_s;
	size_t k1;

	if (!(to_s <= SIM_TIME_MAX_S)) /* the run stops at its next event */
		return;
	/* the later end first: its bin widens the bins if any does */
	k1 = bin_of(s, to_s);

	for (size_t k = (size_t)(from_s / s->bin_s); k <= k1; k++) {
		double lo = fmax(from_s, (double)k * s->bin_s);
		double hi = fmin(to_s, (double)(k + 1) * s->bin_s);

		if (hi > lo)
			s->bin_gpu_s[k] += (hi - lo) * gpus;
	}
}

/* Commits c tokens of the current request at now. */
static void commit(struct sim *s, struct tenant *t, int32_t c)
{
	struct req_stat *q = &t->rq;
	double now = s->q.now_s;
	size_t bin = bin_of(s, now);

	s->bin_tokens[bin] += c;

	HS_ASSERT(c >= 1 && q->committed + c <= q->n_out);
	if (q->committed == 0) {
		q->first_s = now;
	} else {
		sk_add(&t->rq_itl, now - q->last_s);
		if (measured(s))
			sk_add(&t->st.itl, now - q->last_s);
	}
	/* the tokens after the first come with it: gaps of zero */
	sk_add_zeros(&t->rq_itl, (uint64_t)c - 1);
	if (measured(s))
		sk_add_zeros(&t->st.itl, (uint64_t)c - 1);
	q->committed += c;
	q->last_s = now;
}

/* ---- the edge: drafting ---- */

static void maybe_draft(struct sim *s, struct tenant *t)
{
	const struct cfg_group *g = t->cfg;
	int32_t left = t->rq.n_out - t->rq.committed - t->edge.ahead, n;
	double now = s->q.now_s;

	if (t->edge.drafting || t->edge.inflight.n >= (uint32_t)t->edge.window ||
	    left <= 0 || t->edge.handing_back)
		return;
	n = left < t->edge.gamma ? left : t->edge.gamma;
	t->edge.drafting = true;
	t->edge.draft_g = n;
	t->edge.draft_ctx0 = t->rq.prompt + t->rq.committed + t->edge.ahead;
	t->edge.draft_start_s = now;
	/* a bonus token is fed in one pass with the last block's last draft:
	 * that pass costs the device's measured two-token pass, else the
	 * larger of a draft pass (reading the weights) and computing two
	 * tokens at the prefill rate (the fit's intercept left out: it
	 * belongs to long prompts); a device that idled wakes first */
	t->edge.draft_lead_s = wake_extra_s(&g->device.wake,
					    now - t->edge.idle_from_s);
	if (t->edge.feed_bonus && !g->device.ideal_passes) {
		double one = draft_s(&g->device, t->edge.draft_ctx0, 1);
		double two = g->device.draft_pair_s > 0 ? g->device.draft_pair_s :
			     2 * g->device.prefill_per_token_s;

		t->edge.draft_lead_s += fmax(0, two - one);
	}
	t->edge.feed_bonus = false;
	t->edge.draft_lead_s += t->edge.feed_s;
	t->edge.feed_s = 0;
	t->edge.ahead += n;
	t->edge.draft_ev = eq_push(&s->q, when(now + t->edge.draft_lead_s +
						draft_s(&g->device,
							t->edge.draft_ctx0, n)),
				   0, (struct eq_event){ .kind = EV_DRAFT,
							 .id = t->id });
}

static void on_draft(struct sim *s, struct tenant *t)
{
	int32_t base = t->rq.committed + t->edge.ahead - t->edge.draft_g;

	t->edge.drafting = false;
	t->edge.idle_from_s = s->q.now_s;
	t->rq.drafted += (uint64_t)t->edge.draft_g;
	spend_edge(s, t, &t->rq.compute_s, t->edge.draft_start_s);
	if (traced(s, t->id))
		trace_span(s->opt.trace, TRACE_EDGE, t->id, "draft",
			   t->edge.draft_start_s,
			   s->q.now_s, "\"tokens\":%ld,\"epoch\":%ld",
			   t->edge.draft_g, t->edge.epoch);
	blk_ring_push(&t->edge.inflight, (struct blk){ .epoch = t->edge.epoch,
		.g = t->edge.draft_g, .base = base, .t_s = s->q.now_s });
	t->rq.blocks_sent++;
	t->rq.draft_sent += (uint64_t)t->edge.draft_g;
	send(s, t, true, MSG_BLOCK, t->edge.draft_g, base, t->edge.draft_g);
	maybe_draft(s, t);
}

/* The block being drafted, if any, is cut short and thrown away. */
static void stop_draft(struct sim *s, struct tenant *t)
{
	int32_t done;

	if (!t->edge.drafting)
		return;
	done = drafted_by(&t->edge, &t->cfg->device, s->q.now_s, NULL);
	t->rq.drafted += (uint64_t)done;
	t->rq.wasted += (uint64_t)done;
	spend_edge(s, t, &t->rq.compute_s, t->edge.draft_start_s);
	if (traced(s, t->id))
		trace_span(s->opt.trace, TRACE_EDGE, t->id, "draft",
			   t->edge.draft_start_s, s->q.now_s,
			   "\"tokens\":%ld,\"epoch\":%ld,\"discarded\":1",
			   done, t->edge.epoch);
	HS_ASSERT(eq_cancel(&s->q, t->edge.draft_ev));
	t->edge.drafting = false;
	t->edge.idle_from_s = s->q.now_s;
	t->edge.ahead -= t->edge.draft_g;
}

/* Throws away every draft of the current epoch (in flight or in progress). */
static void discard_drafts(struct sim *s, struct tenant *t)
{
	while (t->edge.inflight.n)
		t->rq.wasted += (uint64_t)blk_ring_pop(&t->edge.inflight).g;
	stop_draft(s, t);
	t->edge.ahead = 0;
}

/* ---- adaptive speculation ---- */

/* A verdict on the oldest blocks in flight: nfull accepted whole, then one
 * with k of its drafts accepted (k < 0: none rejected). The estimates take
 * it in, and the next block's gamma (and window) is the model's best. */
static void tune_gamma(struct sim *s, struct tenant *t, uint32_t nfull,
		       int32_t k)
{
	const struct cfg_protocol *pr = &t->cfg->proto;
	const struct cfg_device *d = &t->cfg->device;
	struct tenant_edge *e = &t->edge;
	double judged = 0, accepted = 0;

	for (uint32_t i = 0; i < nfull; i++) {
		judged += blk_ring_at(&e->inflight, i)->g;
		accepted += blk_ring_at(&e->inflight, i)->g;
	}
	if (k >= 0) {
		judged += k + 1;
		accepted += k;
	}
	adapt_observe(&e->est, pr->adapt.weight, judged, accepted,
		      s->q.now_s - blk_ring_at(&e->inflight, 0)->t_s);
	adapt_choose(pr, &e->est, d->draft_base_s + d->draft_per_ctx_s *
		     (t->rq.prompt + t->rq.committed), &e->gamma, &e->window);
}

/* ---- the hand-back (docs/protocols.md) ---- */

/* The acceptance model's alpha, the draft step at the context reached,
 * the mean RTT now and the tenant's window (1: sync), as the handover and
 * hand-back policies reckon with them. */
struct reckon {
	double alpha, step_s, rtt_s;
	int window;
};

static struct reckon reckon(const struct sim *s, const struct tenant *t)
{
	const struct cfg_group *g = t->cfg;
	const struct cfg_device *d = &g->device;

	return (struct reckon){ acc_alpha(t->acc.cfg, t->acc.trace),
		d->draft_base_s + d->draft_per_ctx_s * (t->rq.prompt +
							 t->rq.committed),
		dist_mean(cfg_wan_rtt(&g->wan, s->q.now_s)),
		g->proto.caps.windowed ? t->edge.window : 1 };
}

/* The policies, a row each in HANDBACK_LIST: whether the edge hands the
 * rest of the request back now, at a verdict for its oldest block in
 * flight (a policy keeps what it observes of it). */
static bool back_never(const struct sim *s, struct tenant *t)
{
	(void)s, (void)t;
	return false;
}

/* hback.h's estimate and rule. */
static bool back_faster(const struct sim *s, struct tenant *t)
{
	struct reckon k = reckon(s, t);

	hb_observe(&t->edge.hb, s->q.now_s -
		   blk_ring_at(&t->edge.inflight, 0)->t_s, k.rtt_s);
	return hb_faster(&t->edge.hb, k.alpha, t->edge.gamma, k.window,
			 k.step_s, k.rtt_s);
}

#define HANDBACK_FN(kind, name, fn) [HANDBACK_##kind] = fn,
static bool (*const back_policy[HANDBACK_N])(const struct sim *,
					     struct tenant *) = {
	HANDBACK_LIST(HANDBACK_FN)
};
#undef HANDBACK_FN

/* A hand-back decided: BACK goes up once no block is in flight. */
static void maybe_back(struct sim *s, struct tenant *t)
{
	if (!t->edge.handing_back || t->rq.handed_back || t->edge.inflight.n)
		return;
	t->rq.handed_back = 1;
	send(s, t, true, MSG_BACK, t->rq.committed, 0, 0);
}

static void on_verdict(struct sim *s, struct tenant *t, const struct link_msg *m)
{
	uint32_t nblocks = (uint32_t)(m->a >> 32), nfull = (uint32_t)m->a;
	int32_t k = (int32_t)m->b;
	struct req_stat *q = &t->rq;
	int32_t before = q->committed;

	HS_ASSERT(m->epoch == t->edge.epoch && nfull <= nblocks);
	if (!t->edge.handing_back &&
	    back_policy[t->cfg->proto.handback](s, t)) {
		t->edge.handing_back = true; /* the block being drafted waits */
		stop_draft(s, t);
	}
	if (t->cfg->proto.adapt.on)
		tune_gamma(s, t, nfull, nblocks > nfull ? k : -1);
	for (uint32_t i = 0; i < nfull; i++) {
		struct blk b = blk_ring_pop(&t->edge.inflight);

		t->edge.ahead -= b.g;
		q->judged += (uint64_t)b.g;
		q->accepted += (uint64_t)b.g;
		commit(s, t, b.g);
	}
	if (nfull < nblocks) {
		struct blk b = blk_ring_pop(&t->edge.inflight);
		int32_t c = k + 1 <= q->n_out - q->committed ? k + 1
							      : q->n_out - q->committed;

		t->edge.ahead -= b.g;
		q->judged += (uint64_t)k + 1;
		q->accepted += (uint64_t)k;
		q->wasted += (uint64_t)(b.g - k);
		commit(s, t, c);
		discard_drafts(s, t);
		t->edge.epoch++;
	} else if (t->edge.inflight.n == 0 && !t->edge.drafting &&
		   q->committed < q->n_out) {
		commit(s, t, 1); /* the bonus token */
		t->edge.feed_bonus = true;
	}
	if (q->committed > before)
		q->verdicts++;
	if (q->committed == q->n_out) {
		discard_drafts(s, t);
		finish_request(s, t);
	} else {
		maybe_back(s, t);
		maybe_draft(s, t);
	}
}

/* edge_only: the device makes the request's next token. */
static void make_token(struct sim *s, struct tenant *t,
		       const struct cfg_device *d)
{
	double step = draft_s(d, t->rq.prompt + t->rq.committed, 1);

	t->edge.draft_start_s = s->q.now_s;
	if (traced(s, t->id))
		trace_span(s->opt.trace, TRACE_EDGE, t->id, "token",
			   s->q.now_s, s->q.now_s + step, NULL, 0, 0);
	push(s, s->q.now_s + step, EV_EDGE_TOKEN, t->id);
}

static void on_edge_token(struct sim *s, struct tenant *t)
{
	const struct cfg_device *d = &t->cfg->device;
	struct req_stat *q = &t->rq;

	spend_edge(s, t, &q->compute_s, t->edge.draft_start_s);
	commit(s, t, 1);
	q->drafted++;
	if (q->committed == q->n_out)
		finish_request(s, t);
	else
		make_token(s, t, d);
}

/* ---- the handover start (docs/protocols.md) ---- */

/* The policies, a row each in HANDOVER_LIST: whether the edge, its draft
 * cache caught up, takes the request over from the cloud now, never, or
 * asks again when the next token comes down. */
enum hand { HAND_DECLINE, HAND_TAKE, HAND_LATER };

static enum hand hand_never(const struct sim *s, const struct tenant *t)
{
	(void)s, (void)t;
	return HAND_DECLINE;
}

static enum hand hand_always(const struct sim *s, const struct tenant *t)
{
	(void)s, (void)t;
	return HAND_TAKE;
}

/* Only when the protocol's expected time a token (formula.h: sync's, or
 * async's renewal, at the acceptance model's alpha, a draft step at the
 * context reached, the mean RTT and a verification as long as the
 * cloud's observed gap) beats the gap between the tokens the cloud
 * streamed; with fewer than two of them there is no gap yet: later. */
static enum hand hand_faster(const struct sim *s, const struct tenant *t)
{
	const struct req_stat *q = &t->rq;
	struct reckon k;
	double gap;

	if (q->committed < 2)
		return HAND_LATER;
	gap = (q->last_s - q->first_s) / (q->committed - 1);
	k = reckon(s, t);
	return fm_edge_s_per_token(k.alpha, t->edge.gamma, k.window, k.step_s,
				   k.rtt_s, gap) < gap ? HAND_TAKE : HAND_DECLINE;
}

#define HANDOVER_FN(kind, name, fn) [HANDOVER_##kind] = fn,
static enum hand (*const hand_policy[HANDOVER_N])(const struct sim *,
						  const struct tenant *) = {
	HANDOVER_LIST(HANDOVER_FN)
};
#undef HANDOVER_FN

/* A prefill of the handover start ended: the draft cache holds the prompt
 * and kv_pos output tokens. The edge catches up on the tokens streamed
 * down since, as long as each catch-up is shorter than the one before
 * (else the cloud outruns its prefill); then, if the policy takes the
 * request, READY goes up, and the edge waits for the cloud's last token;
 * a policy that cannot tell yet is asked again at the next token. */
static void handover_step(struct sim *s, struct tenant *t)
{
	int32_t n = t->rq.committed - t->edge.kv_pos;

	if (n > 0 && n < t->edge.backlog) {
		t->edge.backlog = n;
		t->edge.kv_pos = t->rq.committed;
		t->rq.catchup += (uint64_t)n;
		edge_prefill(s, t, n);
		return;
	}
	switch (hand_policy[t->cfg->proto.handover](s, t)) {
	case HAND_DECLINE: /* the cloud serves the request to its end */
		return;
	case HAND_LATER: /* at the next token that comes down */
		t->edge.ask_again = true;
		return;
	case HAND_TAKE:
		break;
	}
	t->rq.ready_msgs++;
	send(s, t, true, MSG_READY, t->edge.kv_pos, 0, 0);
}

/* The cloud's last token came: the request is the protocol's from here.
 * The tokens it made past the edge's draft cache are fed with the first
 * block's first pass, at the prefill rate. */
static void handover_take(struct sim *s, struct tenant *t)
{
	int32_t n = t->rq.committed - t->edge.kv_pos;

	t->edge.starting = false;
	t->rq.handed_over = 1;
	t->rq.cloud_made = (uint64_t)t->rq.committed;
	t->rq.catchup += (uint64_t)n;
	t->edge.kv_pos = t->rq.committed;
	t->edge.feed_s = n * t->cfg->device.prefill_per_token_s;
	maybe_draft(s, t);
}

static void on_edge_prefill(struct sim *s, struct tenant *t)
{
	const struct cfg_group *g = t->cfg;

	t->edge.prefilling = false;
	spend_edge(s, t, &t->rq.prefill_s, t->edge.prefill_start_s);
	if (!g->proto.caps.uses_cloud) {
		make_token(s, t, &g->device);
	} else if (t->edge.starting) {
		t->edge.idle_from_s = s->q.now_s; /* it computed until now */
		handover_step(s, t);
	} else {
		maybe_draft(s, t);
	}
}

/* ---- the cloud ---- */

static void try_start(struct sim *s, uint32_t ri);

/* ---- the KV cache: its policies, a row each in KV_LIST ---- */

/* A KV policy's parts: whether a waiting request t fits the pool (*take:
 * the blocks it takes when admitted), and whether a sequence takes blocks
 * as its tokens arrive (kv_grow) rather than holding them from admission.
 * Indexed by enum kv_policy; s->kv is the config's. */
struct kv_ops {
	bool (*admits)(const struct sim *s, const struct replica *r,
		       const struct tenant *t, int64_t *take);
	bool grows;
};

/* paged: the blocks of what its prefill computes, if the pool keeps the
 * watermark free after them (vLLM 0.6's BlockSpaceManager.can_allocate) */
static bool kv_admit_paged(const struct sim *s, const struct replica *r,
			   const struct tenant *t, int64_t *take)
{
	*take = kvpool_blocks_of(&r->kv, t->cloud.fill);
	return kvpool_fits(&r->kv, *take, s->kv_watermark);
}

/* reserve: its whole prompt and output, held to its end */
static bool kv_admit_reserve(const struct sim *s, const struct replica *r,
			     const struct tenant *t, int64_t *take)
{
	(void)s;
	*take = kvpool_blocks_of(&r->kv, (int64_t)t->cloud.prompt + t->cloud.out);
	return kvpool_fits(&r->kv, *take, 0);
}

#define KV_OPS(policy, name, admits, grows) [KV_##policy] = { admits, grows },
static const struct kv_ops kv_ops[KV_N] = { KV_LIST(KV_OPS) };
#undef KV_OPS

/* Removes tenant id from f, keeping the order of the rest. */
static void fifo_remove(struct fifo *f, uint32_t id)
{
	uint32_t n = f->n;

	for (uint32_t i = 0; i < n; i++) {
		uint32_t x = fifo_pop(f);

		if (x != id)
			fifo_push(f, x);
	}
}

/* Frees t's blocks and takes it off the replica's admitted list. */
static void unadmit(struct sim *s, struct replica *r, struct tenant *t)
{
	uint32_t last = r->run[--r->active];

	HS_ASSERT(t->cloud.admitted);
	t->cloud.admitted = false;
	kvpool_free(&r->kv, &t->cloud.blocks);
	r->run[t->cloud.run_at] = last;
	s->t[last].cloud.run_at = t->cloud.run_at;
}

/* Admits a waiting request that took blocks: its prefill is queued. */
static void admit(struct sim *s, struct tenant *t, int64_t blocks)
{
	struct replica *r = &s->r[t->cloud.replica];

	if (measured(s) && t->rq.preemptions == 0)
		sk_add(&r->admit_wait, s->q.now_s - t->cloud.prompt_s);
	t->cloud.admitted = true;
	if (r->active == r->run_cap) {
		r->run_cap = r->run_cap ? 2 * r->run_cap : 16;
		r->run = xrealloc(r->run, r->run_cap * sizeof(*r->run));
	}
	t->cloud.run_at = r->active;
	r->run[r->active++] = t->id;
	if (r->active > r->peak_active)
		r->peak_active = r->active;
	kvpool_take(&r->kv, &t->cloud.blocks, blocks);
	t->cloud.prefill_left = t->cloud.fill;
	t->cloud.kv_whole = false;
	t->cloud.in_prefill = true;
	t->cloud.queued_s = s->q.now_s;
	fifo_push(&r->prefill, t->id);
}

/* The request's end: its blocks return to the pool (a preempted one
 * leaves the waiting queue instead). */
static void release_kv(struct sim *s, struct tenant *t)
{
	struct replica *r = &s->r[t->cloud.replica];

	if (!t->cloud.admitted) {
		fifo_remove(&r->admit, t->id);
		return;
	}
	unadmit(s, r, t);
}

/* Recompute preemption: t's blocks are freed and it waits at the front of
 * the queue, to prefill its prompt and its output so far again. */
static void preempt(struct sim *s, struct replica *r, struct tenant *t)
{
	unadmit(s, r, t);
	if (t->cloud.in_prefill)
		fifo_remove(&r->prefill, t->id);
	t->cloud.in_prefill = false;
	t->cloud.fill = t->cloud.prompt + t->cloud.kv_out;
	t->rq.preemptions++;
	if (measured(s))
		r->preemptions++;
	fifo_push_front(&r->admit, t->id);
	if (traced(s, t->id))
		trace_span(s->opt.trace, TRACE_QUEUE, t->id, "preempted",
			   s->q.now_s, s->q.now_s, NULL, 0, 0);
}

/* The admitted request that arrived last of those with no item in the
 * forming batch, other than t; t if there is none (vLLM preempts from the
 * tail of its running queue, itself last). */
static struct tenant *victim(struct sim *s, struct replica *r,
			     struct tenant *t)
{
	struct tenant *v = t;

	for (uint32_t i = 0; i < r->active; i++) {
		struct tenant *u = &s->t[r->run[i]];

		if (u == t || u->cloud.in_batch)
			continue;
		if (v == t || cfg_preempts_first(u->cloud.prompt_s, u->id,
						 v->cloud.prompt_s, v->id))
			v = u;
	}
	return v;
}

/* kvpool_grow's preemption: the victim of t's growth preempted */
struct growth {
	struct sim *s;
	struct replica *r;
	struct tenant *t;
};

static bool preempt_victim(void *ctx)
{
	struct growth *g = ctx;
	struct tenant *v = victim(g->s, g->r, g->t);

	preempt(g->s, g->r, v);
	return v == g->t;
}

/* Blocks for t's KV cache to hold tokens, under a policy that grows,
 * preempting while the pool is short; false when t itself was preempted. */
static bool kv_grow(struct sim *s, struct replica *r, struct tenant *t,
		    int64_t tokens)
{
	struct growth g = { s, r, t };

	return !s->kv->grows ||
	       kvpool_grow(&r->kv, &t->cloud.blocks, tokens, preempt_victim, &g);
}

/* After an iteration a growing policy keeps the blocks of what t's KV
 * cache holds: the prompt and the output whose K and V it computed and
 * kept, kv_out (rejected drafts are never appended). */
static void kv_trim(struct sim *s, struct replica *r, struct tenant *t,
		    int32_t kv_out)
{
	t->cloud.kv_out = kv_out;
	if (s->kv->grows)
		kvpool_trim(&r->kv, &t->cloud.blocks,
			    (int64_t)t->cloud.prompt + kv_out);
}

static void take_prefill(struct sim *s, struct replica *r, uint32_t ti,
			 long *budget);

/* Admits waiting requests in order while the replica runs fewer than
 * max_num_seqs, the budget has room and the policy finds their blocks;
 * each one's first prefill chunk joins the batch. */
static void admit_waiting(struct sim *s, struct replica *r, long *budget)
{
	int64_t take;

	while (r->admit.n && *budget > 0 &&
	       r->active < s->cfg->cloud.max_num_seqs) {
		struct tenant *w = &s->t[*fifo_at(&r->admit, 0)];

		if (!s->kv->admits(s, r, w, &take))
			break;
		fifo_pop(&r->admit);
		admit(s, w, take);
		take_prefill(s, r, w->id, budget);
	}
}

/* ---- the scheduling policies: their functions, a row each in SCHED_LIST ---- */

/* A scheduling policy's parts: whether each tenant has a replica of its
 * own, where a tenant's work goes, whether an idle replica waits, and how
 * it fills a batch. Indexed by enum sched_policy, made from SCHED_LIST
 * (cfg.h) below the functions; s->sched is the config's. */
struct sched_ops {
	bool replica_per_tenant;
	uint32_t (*route)(struct sim *s, const struct tenant *t);
	bool (*hold)(struct sim *s, uint32_t ri);
	void (*form_batch)(struct sim *s, struct replica *r);
};


/* dedicated: each tenant has a replica of its own */
static uint32_t route_own(struct sim *s, const struct tenant *t)
{
	(void)s;
	return t->id;
}

/* shared replicas: the config's router picks one */
static uint32_t route_shared(struct sim *s, const struct tenant *t)
{
	uint32_t best = 0;

	(void)t;
	if (s->cfg->cloud.router == ROUTER_ROUND_ROBIN) {
		best = s->rr_next;
		s->rr_next = (s->rr_next + 1) % s->n_replicas;
		return best;
	}
	for (uint32_t i = 1; i < s->n_replicas; i++)
		if (s->r[i].active + s->r[i].admit.n <
		    s->r[best].active + s->r[best].admit.n)
			best = i;
	return best;
}

/* Queues t in its replica's ready FIFO, kept in the order of when each
 * began to wait (queued_s): since_s is now for new work (the tail, at
 * once), its oldest block's arrival for blocks that waited through a
 * prefill or stayed after a verification (the real verifier orders
 * segments by their waiting, not by when they were last served). */
static void enqueue_ready_since(struct sim *s, struct tenant *t,
				double since_s)
{
	struct fifo *f = &s->r[t->cloud.replica].ready;
	uint32_t n = f->n;
	bool placed = false;

	if (t->cloud.in_ready)
		return;
	t->cloud.in_ready = true;
	t->cloud.queued_s = since_s;
	if (n == 0 || s->t[*fifo_at(f, n - 1)].cloud.queued_s <= since_s) {
		fifo_push(f, t->id);
		return;
	}
	for (uint32_t i = 0; i < n; i++) {
		uint32_t x = fifo_pop(f);

		if (!placed && s->t[x].cloud.queued_s > since_s) {
			fifo_push(f, t->id);
			placed = true;
		}
		fifo_push(f, x);
	}
}

static void enqueue_ready(struct sim *s, struct tenant *t)
{
	enqueue_ready_since(s, t, s->q.now_s);
}

/* Queues t, whose blocks waited, by its oldest one. */
static void enqueue_ready_by_block(struct sim *s, struct tenant *t)
{
	enqueue_ready_since(s, t, blk_ring_at(&t->cloud.cq, 0)->t_s);
}

/* Drops the blocks at the head of the cloud queue that are stale. */
static void drop_stale(struct sim *s, struct tenant *t)
{
	while (t->cloud.cq.n && blk_ring_at(&t->cloud.cq, 0)->epoch < t->cloud.epoch) {
		blk_ring_pop(&t->cloud.cq);
		s->stale_dropped++;
	}
}

static void on_up(struct sim *s, struct tenant *t)
{
	struct link_msg m = link_pop(&t->up);
	const struct cfg_cloud *cl = &s->cfg->cloud;

	switch ((enum msg_kind)m.kind) {
	case MSG_PROMPT:
		t->cloud.prompt = (int32_t)m.a;
		t->cloud.out = (int32_t)m.b;
		t->cloud.prompt_s = t->cloud.queued_s = s->q.now_s;
		/* every replica's pool is alike */
		if (!kvpool_holds(&s->r[0].kv, kvpool_blocks_of(&s->r[0].kv,
				  (int64_t)t->cloud.prompt + t->cloud.out),
				  s->kv->grows ? s->kv_watermark : 0)) {
			err_set(s->err, "/cloud/kv_capacity_tokens: %lld tokens "
				"(%lld blocks of %lld%s) are fewer than one "
				"request needs (prompt %d + output %d tokens, "
				"group \"%s\")", cl->kv_capacity_tokens,
				(long long)s->kv_blocks, cl->block_tokens,
				s->kv->grows ? ", less the watermark" : "",
				t->cloud.prompt, t->cloud.out, t->cfg->name);
			s->failed = true;
			return;
		}
		t->cloud.replica = s->sched->route(s, t);
		t->cloud.epoch = m.epoch;
		t->cloud.fill = t->cloud.prompt;
		t->cloud.kv_out = 0;
		t->cloud.pos = 0;
		t->cloud.decoding = t->cfg->proto.handover != HANDOVER_NEVER;
		t->cloud.stop_next = t->cloud.ready_later = false;
		fifo_push(&s->r[t->cloud.replica].admit, t->id);
		break;
	case MSG_BLOCK:
		if (m.epoch < t->cloud.epoch) {
			s->stale_dropped++;
			return;
		}
		blk_ring_push(&t->cloud.cq, (struct blk){ .epoch = m.epoch, .g = (int32_t)m.a,
						.base = (int32_t)m.b,
						.t_s = s->q.now_s });
		if (t->cloud.admitted && !t->cloud.in_prefill)
			enqueue_ready(s, t);
		break;
	case MSG_DONE:
		t->cloud.cq.n = 0; /* nothing of the request is left to verify */
		release_kv(s, t);
		break;
	case MSG_READY: /* its next token is its last (if it has one left):
			 * the one after the iteration in progress, as a
			 * server reads its messages between iterations */
		if (t->cloud.in_batch)
			t->cloud.ready_later = true;
		else
			t->cloud.stop_next = t->cloud.decoding;
		break;
	case MSG_BACK: /* no block of it is left: it decodes from a on */
		t->cloud.pos = (int32_t)m.a;
		t->cloud.decoding = true;
		t->cloud.kv_whole = false;
		if (t->cloud.admitted && !t->cloud.in_prefill)
			enqueue_ready(s, t);
		break;
	case MSG_VERDICT:
	case MSG_TOKEN:
		HS_ASSERT(!"a downlink message on the uplink");
	}
	try_start(s, t->cloud.replica);
}

/* The oldest downlink message reaches the edge; held: it came while the
 * edge was drafting and waited for the forward pass then in progress to
 * end (a pass is not interrupted). */
static void on_down(struct sim *s, struct tenant *t, bool held)
{
	struct link_msg m;
	double pass_end_s;

	if (!held && t->edge.drafting && !t->cfg->device.ideal_passes &&
	    link_peek(&t->down)->kind == MSG_VERDICT &&
	    drafted_by(&t->edge, &t->cfg->device, s->q.now_s,
		       &pass_end_s) < t->edge.draft_g) {
		push(s, pass_end_s, EV_DOWN_HELD, t->id);
		return;
	}
	m = link_pop(&t->down);

	radio_charge(s, t, m.bytes, false);
	switch ((enum msg_kind)m.kind) {
	case MSG_VERDICT:
		t->rq.verdict_msgs++;
		on_verdict(s, t, &m);
		break;
	case MSG_TOKEN:
		t->rq.token_msgs++;
		commit(s, t, (int32_t)m.a);
		t->rq.verdicts++;
		if (t->rq.handed_back)
			t->rq.back_made += (uint64_t)m.a;
		if (t->rq.committed == t->rq.n_out) {
			finish_request(s, t);
		} else if (m.b) {
			handover_take(s, t);
		} else if (t->edge.ask_again) {
			t->edge.ask_again = false;
			handover_step(s, t);
		}
		break;
	case MSG_PROMPT:
	case MSG_BLOCK:
	case MSG_DONE:
	case MSG_READY:
	case MSG_BACK:
		HS_ASSERT(!"an uplink message on the downlink");
	}
}

/* Whether the cloud makes t's tokens itself: cloud_only, cloud_spec, the
 * start of a handover and the rest after a hand-back (else it verifies
 * the edge's blocks). */
static bool cloud_decodes(const struct tenant *t)
{
	return !t->cfg->proto.caps.speculates || t->cloud.decoding;
}

/* Deadline of a tenant's next piece of work, for the slo policy. */
static double deadline(const struct tenant *t)
{
	if (t->rq.committed == 0)
		return t->rq.arrive_s + t->cfg->slo.ttft_s;
	return t->rq.last_s + t->cfg->slo.tpot_s;
}

static void add_item(struct sim *s, struct replica *r, struct item it)
{
	s->t[it.tenant].cloud.in_batch = true;
	if (r->nbatch == r->batch_cap) {
		r->batch_cap = r->batch_cap ? 2 * r->batch_cap : 16;
		r->batch = xrealloc(r->batch, r->batch_cap * sizeof(*r->batch));
	}
	r->batch[r->nbatch++] = it;
}

/* Draft tokens of a cloud_spec round: gamma, or what is left to make. */
static int32_t round_gamma(const struct tenant *t)
{
	int32_t left = t->cloud.out - t->cloud.pos, g = t->cfg->proto.gamma;

	return left < g ? left : g;
}

/* A tenant's ready item, in it, if it fits in budget (an empty batch takes
 * one whatever its size): its tokens, or 0 when none fit. */
static int32_t ready_item(struct sim *s, struct tenant *t, long budget,
			  bool empty, struct item *it)
{
	const struct proto_caps *caps = &t->cfg->proto.caps;
	int32_t tok = 1;

	*it = (struct item){ .tenant = t->id, .kind = ITEM_DECODE,
			     .tokens = 1 };
	if (caps->cloud_drafts) {
		/* a round: the draft model's steps in the iteration (try_start
		 * prices them), then the target judges them and its own next */
		it->kind = ITEM_VERIFY;
		it->tokens = round_gamma(t) + 1;
		return it->tokens <= budget || empty ? it->tokens : 0;
	}
	if (cloud_decodes(t))
		return budget >= 1 || empty ? 1 : 0;
	drop_stale(s, t);
	/* a segment feeds the token before its drafts (the last prompt
	 * token, a correction or a bonus the edge took), unless the KV cache
	 * holds all that precedes the first block */
	if (t->cloud.kv_whole && t->cloud.cq.n &&
	    blk_ring_at(&t->cloud.cq, 0)->base == t->cloud.pos)
		tok = 0;
	for (uint32_t i = 0; i < t->cloud.cq.n; i++) {
		int32_t g = blk_ring_at(&t->cloud.cq, i)->g;

		if (tok + g > budget && (it->blocks || !empty))
			break;
		tok += g;
		it->blocks++;
	}
	it->kind = ITEM_VERIFY;
	it->tokens = tok;
	return it->blocks ? tok : 0;
}

/* Adds tenant ti's ready item to the batch if it fits and its KV cache
 * gets the blocks: 1; 0 when it does not fit; -1 when the tenant has no
 * item to run (preempted, now or before): it leaves the ready FIFO. */
static int take_ready(struct sim *s, struct replica *r, uint32_t ti,
		      long *budget)
{
	struct tenant *t = &s->t[ti];
	struct item it;

	if (!t->cloud.admitted)
		return -1;
	if (!ready_item(s, t, *budget, r->nbatch == 0, &it))
		return 0;
	if (!kv_grow(s, r, t, (int64_t)t->cloud.prompt + t->cloud.kv_out +
				      it.tokens))
		return -1;
	add_item(s, r, it);
	*budget -= it.tokens;
	return 1;
}

static void take_prefill(struct sim *s, struct replica *r, uint32_t ti,
			 long *budget)
{
	struct tenant *t = &s->t[ti];
	long chunk = t->cloud.prefill_left;

	if (chunk > s->cfg->cloud.prefill_chunk_tokens)
		chunk = s->cfg->cloud.prefill_chunk_tokens;
	if (chunk > *budget)
		chunk = *budget;
	add_item(s, r, (struct item){ .tenant = ti, .tokens = (int32_t)chunk,
				      .kind = ITEM_PREFILL });
	*budget -= chunk;
}

static int by_deadline(const void *a, const void *b)
{
	const double *x = a, *y = b;

	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	return (x[1] > y[1]) - (x[1] < y[1]);
}

/* Removes from the ready FIFO the tenants left with nothing to verify (all
 * their queued blocks were stale, or their request ended) or preempted. */
static void purge_ready(struct sim *s, struct replica *r)
{
	uint32_t n = r->ready.n;

	for (uint32_t i = 0; i < n; i++) {
		uint32_t ti = fifo_pop(&r->ready);
		struct tenant *t = &s->t[ti];

		if (!t->cloud.admitted) {
			t->cloud.in_ready = false;
			continue;
		}
		if (!cloud_decodes(t)) {
			drop_stale(s, t);
			if (t->cloud.cq.n == 0) {
				t->cloud.in_ready = false;
				continue;
			}
		}
		fifo_push(&r->ready, ti);
	}
}

/* Batch forming: each fills r->batch from the replica's queues within the
 * token budget; ready items leave their FIFO, prefill items stay until
 * their prompt is done. form_begin empties the batch and the ready FIFO
 * of tenants with nothing left to verify. */
static long form_begin(struct sim *s, struct replica *r)
{
	r->nbatch = 0;
	purge_ready(s, r);
	return s->cfg->cloud.max_batch_tokens;
}

/* slo: least slack first over both queues, by (deadline, position);
 * then waiting requests are admitted */
static void form_least_slack(struct sim *s, struct replica *r)
{
	long budget = form_begin(s, r);
	uint32_t nr = r->ready.n, n = nr + r->prefill.n, left = 0;
	double *keys = xmalloc(2 * n * sizeof(double));
	uint32_t *ids = xmalloc((n ? n : 1) * sizeof(uint32_t));
	uint32_t *keep = xmalloc((nr ? nr : 1) * sizeof(uint32_t));
	bool *taken = xcalloc(n ? n : 1, sizeof(bool));

	for (uint32_t i = 0; i < n; i++) {
		ids[i] = i < nr ? *fifo_at(&r->ready, i)
				: *fifo_at(&r->prefill, i - nr);
		keys[2 * i] = deadline(&s->t[ids[i]]);
		keys[2 * i + 1] = i;
	}
	qsort(keys, n, 2 * sizeof(double), by_deadline);
	for (uint32_t i = 0; i < n && budget > 0; i++) {
		uint32_t j = (uint32_t)keys[2 * i + 1];
		int got;

		if (j >= nr) {
			/* preempted by an item before it: no longer there */
			if (s->t[ids[j]].cloud.in_prefill)
				take_prefill(s, r, ids[j], &budget);
			continue;
		}
		if ((got = take_ready(s, r, ids[j], &budget)) == 0)
			break;
		taken[j] = true;
		if (got < 0)
			s->t[ids[j]].cloud.in_ready = false;
	}
	for (uint32_t j = 0; j < nr; j++)
		if (!taken[j])
			keep[left++] = ids[j];
	r->ready.n = 0;
	for (uint32_t j = 0; j < left; j++)
		fifo_push(&r->ready, keep[j]);
	admit_waiting(s, r, &budget);
	free(keys);
	free(ids);
	free(keep);
	free(taken);
}

/* continuous, window, dedicated: verify and decode first (FIFO), then
 * prefill chunks fill what is left of the budget, the admitted requests'
 * before the waiting ones' (vLLM 0.6's scheduler with chunked prefill) */
static void form_fifo(struct sim *s, struct replica *r)
{
	long budget = form_begin(s, r);
	int got;

	while (r->ready.n && budget > 0 &&
	       (got = take_ready(s, r, *fifo_at(&r->ready, 0), &budget))) {
		uint32_t ti = fifo_pop(&r->ready);

		if (got < 0)
			s->t[ti].cloud.in_ready = false;
	}
	for (uint32_t i = 0; i < r->prefill.n && budget > 0; i++)
		take_prefill(s, r, *fifo_at(&r->prefill, i), &budget);
	admit_waiting(s, r, &budget);
}

/* Tokens ready to run on a replica (for the window policy). */
static long queued_tokens(struct sim *s, struct replica *r, double *oldest_s)
{
	long tok = 0;

	*oldest_s = INFINITY;
	for (uint32_t i = 0; i < r->ready.n; i++) {
		struct tenant *t = &s->t[*fifo_at(&r->ready, i)];
		struct item it;

		tok += ready_item(s, t, 1L << 30, true, &it);
		if (t->cloud.queued_s < *oldest_s)
			*oldest_s = t->cloud.queued_s;
	}
	for (uint32_t i = 0; i < r->prefill.n + r->admit.n; i++) {
		struct tenant *t = &s->t[i < r->prefill.n ? *fifo_at(&r->prefill, i)
					   : *fifo_at(&r->admit, i - r->prefill.n)];

		tok += i < r->prefill.n ? t->cloud.prefill_left : t->cloud.fill;
		if (t->cloud.queued_s < *oldest_s)
			*oldest_s = t->cloud.queued_s;
	}
	return tok;
}

/* Holding: whether replica ri, idle with queued work, waits instead of
 * starting a batch now. */
static bool hold_never(struct sim *s, uint32_t ri)
{
	(void)s;
	(void)ri;
	return false;
}

/* window: wait until the queue fills a batch or its oldest work has
 * waited window_s; the EV_WINDOW event at that time tries again */
static bool hold_window(struct sim *s, uint32_t ri)
{
	const struct cfg_cloud *cl = &s->cfg->cloud;
	struct replica *r = &s->r[ri];
	double oldest;

	if (queued_tokens(s, r, &oldest) >= cl->max_batch_tokens ||
	    s->q.now_s >= oldest + cl->window_s)
		return false;
	if (r->window_ev == EQ_NONE)
		r->window_ev = eq_push(&s->q, when(oldest + cl->window_s), 0,
				       (struct eq_event){ .kind = EV_WINDOW,
							  .id = ri });
	return true;
}

#define SCHED_OPS(policy, name, deployed, per_tenant, route, hold, form) \
	[SCHED_##policy] = { per_tenant, route, hold, form },
static const struct sched_ops sched_ops[SCHED_N] = { SCHED_LIST(SCHED_OPS) };
#undef SCHED_OPS

bool sim_sched_hold(struct sim *s, uint32_t ri)
{
	return s->sched->hold(s, ri);
}

void sim_sched_form(struct sim *s, uint32_t ri)
{
	s->sched->form_batch(s, &s->r[ri]);
}

/* One sequence of tokens at context ctx, logits of them sampled, joins a
 * model's batch. */
static void batch_add(struct cost_batch *b, long tokens, double ctx,
		      long logits)
{
	b->tokens += tokens;
	b->logits += logits;
	b->seqs++;
	b->ctx_sum += ctx;
	b->tok_ctx_sum += tokens * (ctx + (tokens + 1) / 2.0);
}

/* An iteration's t_s GPU-seconds (0 before the warm-up) shared among the
 * groups of its items by their tokens; empties group_tok. */
static void share_gpu(struct sim *s, double t_s, long tokens)
{
	for (size_t g = 0; g < s->cfg->n_groups; g++) {
		s->group_gpu_s[g] += t_s * (double)s->group_tok[g] / (double)tokens;
		s->group_tok[g] = 0;
	}
}

/* The cloud's draft models in an iteration (cloud_spec in lockstep, as
 * vLLM's speculative decoding runs its proposer): step j runs each draft
 * model once over every sequence of the batch with more than j drafts to
 * make, a token each; the first step also takes the prefill chunks of
 * their prompts. Their seconds; their bytes and FLOPs join *bytes and
 * *flops. */
static double draft_passes_s(struct sim *s, struct replica *r, double *bytes,
			     double *flops)
{
	double t_s = 0;
	int32_t steps = 1;

	if (s->n_drafts == 0)
		return 0;
	for (uint32_t i = 0; i < r->nbatch; i++)
		if (r->batch[i].kind == ITEM_VERIFY &&
		    s->t[r->batch[i].tenant].cfg->proto.caps.cloud_drafts &&
		    r->batch[i].tokens - 1 > steps)
			steps = r->batch[i].tokens - 1;
	for (int32_t j = 0; j < steps; j++) {
		for (uint32_t d = 0; d < s->n_drafts; d++)
			s->dbatch[d] = (struct cost_batch){ 0 };
		for (uint32_t i = 0; i < r->nbatch; i++) {
			const struct item *it = &r->batch[i];
			const struct tenant *t = &s->t[it->tenant];
			uint32_t d = s->draft_of[t->group];

			if (d == UINT32_MAX)
				continue;
			if (it->kind == ITEM_PREFILL && j == 0)
				batch_add(&s->dbatch[d], it->tokens,
					  t->cloud.fill - t->cloud.prefill_left,
					  it->tokens == t->cloud.prefill_left);
			else if (it->kind == ITEM_VERIFY && j < it->tokens - 1)
				batch_add(&s->dbatch[d], 1,
					  t->cloud.prompt + t->cloud.pos + j, 1);
		}
		for (uint32_t d = 0; d < s->n_drafts; d++) {
			double db, df;

			t_s += cost_iter_s(&s->dcost[d], &s->dbatch[d], &db, &df);
			*bytes += db;
			*flops += df;
		}
	}
	return t_s;
}

static void try_start(struct sim *s, uint32_t ri)
{
	struct replica *r = &s->r[ri];
	struct cost_batch cb = { 0 };
	double now = s->q.now_s, t_s, bytes, flops;
	long tokens = 0;

	if (r->busy || s->failed ||
	    (r->ready.n == 0 && r->prefill.n == 0 && r->admit.n == 0))
		return;
	if (s->sched->hold(s, ri))
		return;
	if (r->window_ev != EQ_NONE) {
		eq_cancel(&s->q, r->window_ev);
		r->window_ev = EQ_NONE;
	}
	s->sched->form_batch(s, r);
	if (r->nbatch == 0)
		return;
	for (uint32_t i = 0; i < r->nbatch; i++) {
		const struct item *it = &r->batch[i];
		struct tenant *t = &s->t[it->tenant];
		double ctx = t->cloud.fill - t->cloud.prefill_left;
		/* a prompt samples at its last position, the rest at each */
		long logits = it->kind != ITEM_PREFILL ? it->tokens
			      : it->tokens == t->cloud.prefill_left;

		if (it->kind == ITEM_VERIFY)
			ctx = t->cloud.prompt + (t->cfg->proto.caps.cloud_drafts
						 ? t->cloud.pos
						 : blk_ring_at(&t->cloud.cq, 0)->base);
		else if (it->kind == ITEM_DECODE)
			ctx = t->cloud.prompt + t->cloud.pos;
		batch_add(&cb, it->tokens, ctx, logits);
		tokens += it->tokens;
		s->group_tok[t->group] += (uint64_t)it->tokens;
		if (measured(s))
			sk_add(&r->queue_wait, now - t->cloud.queued_s);
		if (traced(s, it->tenant) && now > t->cloud.queued_s)
			trace_span(s->opt.trace, TRACE_QUEUE, it->tenant,
				   "queued",
				   t->cloud.queued_s, now, NULL, 0, 0);
		if (it->kind == ITEM_PREFILL)
			t->cloud.queued_s = now; /* the rest waits from now on */
	}
	t_s = cost_iter_s(&s->cost, &cb, &bytes, &flops) +
	      wake_extra_s(&s->cfg->cloud.gpu.wake, now - r->idle_from_s) +
	      draft_passes_s(s, r, &bytes, &flops);
	busy_bins(s, now, t_s, s->cfg->cloud.tp);
	r->busy = true;
	r->batch_start_s = now;
	r->batch_s = t_s;
	r->batch_bytes = bytes;
	r->batch_flops = flops;
	if (measured(s)) { /* the GPU is measured after the warm-up */
		r->batches++;
		r->tokens += (uint64_t)tokens;
		sk_add(&r->batch_tokens, (double)tokens);
	}
	share_gpu(s, measured(s) ? t_s : 0, tokens);
	if (s->opt.trace && s->opt.trace->spans < s->opt.trace->max_spans)
		trace_span(s->opt.trace, TRACE_GPU, ri, "batch", now, now + t_s,
			   "\"tokens\":%ld,\"sequences\":%ld", tokens,
			   (long)r->nbatch);
	push(s, now + t_s, EV_BATCH, ri);
}

/* The edge's queued blocks: nblocks of them judged in order to the first
 * rejection. Returns the output positions whose K and V the cloud then
 * holds: to the last accepted draft. */
static int32_t verify(struct sim *s, struct tenant *t, int32_t nblocks)
{
	uint32_t nfull = 0;
	int32_t k = 0, held = t->cloud.pos;

	for (int32_t i = 0; i < nblocks; i++) {
		struct blk b = blk_ring_pop(&t->cloud.cq);

		HS_ASSERT(b.epoch == t->cloud.epoch);
		k = acc_draw(&t->acc, b.base, b.g);
		t->cloud.kv_whole = k == b.g;
		if (k < b.g) {
			held = b.base + k;
			/* the rest of the segment is computed but not judged */
			s->segment_discarded += (uint64_t)(nblocks - i - 1);
			for (int32_t j = i + 1; j < nblocks; j++)
				blk_ring_pop(&t->cloud.cq);
			t->cloud.epoch++;
			drop_stale(s, t);
			break;
		}
		nfull++;
		held = t->cloud.pos = b.base + b.g;
	}
	send(s, t, false, MSG_VERDICT, (int64_t)nblocks << 32 | nfull, k, 2);
	return held;
}

/* cloud_spec: the target judges the round's drafts; the verdict's tokens
 * (the accepted drafts and the target's own next one) stream down. */
static void verify_own(struct sim *s, struct tenant *t, int32_t g)
{
	struct req_stat *q = &t->rq;
	int32_t k = acc_draw(&t->acc, t->cloud.pos, g);
	int32_t c = k + 1 <= t->cloud.out - t->cloud.pos ? k + 1
							 : t->cloud.out - t->cloud.pos;

	q->drafted += (uint64_t)g;
	q->judged += (uint64_t)(k < g ? k + 1 : g);
	q->accepted += (uint64_t)k;
	q->wasted += (uint64_t)(g - k);
	t->cloud.pos += c;
	send(s, t, false, MSG_TOKEN, c, 0, c);
}

/* r's running iteration, to to_s (its end, or the run's), joins the
 * statistics: the part after the warm-up, its bytes and FLOPs pro rata */
static void batch_measured(struct sim *s, struct replica *r, double to_s)
{
	double part = measured_s(s, r->batch_start_s, to_s);

	if (part <= 0 || r->batch_s <= 0)
		return;
	r->busy_s += part;
	r->bytes += r->batch_bytes * part / r->batch_s;
	r->flops += r->batch_flops * part / r->batch_s;
}

/* The cloud decoded the request's next token: down it goes. The last of
 * a handover start (READY came) says so, and the cloud waits for blocks;
 * else it decodes on, or the request is done. */
static void cloud_token(struct sim *s, struct tenant *t)
{
	bool last;

	t->cloud.pos++;
	last = t->cloud.stop_next && t->cloud.pos < t->cloud.out;
	if (last) {
		t->cloud.decoding = t->cloud.stop_next = false;
		t->cloud.kv_whole = false; /* the token it made is fed first */
	}
	send(s, t, false, MSG_TOKEN, 1, last, 1);
	if (t->cloud.pos >= t->cloud.out) {
		t->cloud.decoding = t->cloud.stop_next = false;
		release_kv(s, t);
	} else if (cloud_decodes(t)) {
		enqueue_ready(s, t);
	} else if (t->cloud.cq.n) {
		enqueue_ready_by_block(s, t);
	}
}

static void on_batch(struct sim *s, uint32_t ri)
{
	struct replica *r = &s->r[ri];

	batch_measured(s, r, s->q.now_s);
	r->busy = false;
	r->idle_from_s = s->q.now_s;
	for (uint32_t i = 0; i < r->nbatch; i++) {
		const struct item *it = &r->batch[i];
		struct tenant *t = &s->t[it->tenant];

		if (i + 2 * PREFETCH_AHEAD < r->nbatch)
			prefetch_state(&s->t[it[2 * PREFETCH_AHEAD].tenant]);
		if (i + PREFETCH_AHEAD < r->nbatch)
			prefetch_pointees(&s->t[it[PREFETCH_AHEAD].tenant]);
		bool decodes = cloud_decodes(t);

		t->cloud.in_batch = false;
		switch ((enum item_kind)it->kind) {
		case ITEM_PREFILL:
			t->cloud.prefill_left -= it->tokens;
			if (t->cloud.prefill_left > 0)
				break;
			t->cloud.in_prefill = false;
			/* leaves the prefill FIFO (it is among its first) */
			for (uint32_t j = 0; j < r->prefill.n; j++) {
				if (*fifo_at(&r->prefill, j) != it->tenant)
					continue;
				*fifo_at(&r->prefill, j) = *fifo_at(&r->prefill, 0);
				fifo_pop(&r->prefill);
				break;
			}
			if (decodes) {
				/* the prefill's last position gives the next
				 * token (the first, unless it was preempted) */
				cloud_token(s, t);
			} else if (t->cloud.cq.n) {
				enqueue_ready_by_block(s, t);
			}
			break;
		case ITEM_DECODE:
			t->cloud.in_ready = false;
			kv_trim(s, r, t, t->cloud.pos + 1);
			cloud_token(s, t);
			break;
		case ITEM_VERIFY:
			t->cloud.in_ready = false;
			if (!t->cfg->proto.caps.cloud_drafts) {
				kv_trim(s, r, t, verify(s, t, it->blocks));
				if (t->cloud.cq.n)
					enqueue_ready_by_block(s, t);
				break;
			}
			verify_own(s, t, it->tokens - 1);
			kv_trim(s, r, t, t->cloud.pos);
			if (t->cloud.pos < t->cloud.out)
				enqueue_ready(s, t);
			else
				release_kv(s, t);
			break;
		}
		if (t->cloud.ready_later) { /* READY came during it */
			t->cloud.ready_later = false;
			t->cloud.stop_next = t->cloud.decoding;
		}
	}
	r->nbatch = 0;
	try_start(s, ri);
}

/* ---- set-up and the loop ---- */

/* Names the trace's tracks: a traced tenant's on the edge, the links and
 * the cloud queue, each replica's on the GPU. */
static void name_tracks(struct sim *s)
{
	static const enum trace_kind per_tenant[] = { TRACE_EDGE, TRACE_UP,
		TRACE_DOWN, TRACE_QUEUE };

	if (!s->opt.trace)
		return;
	for (uint32_t i = 0; i < s->n_tenants && traced(s, i); i++)
		for (size_t k = 0; k < 4; k++)
			trace_name(s->opt.trace, per_tenant[k], i,
				   "tenant %u (%s #%u)", i, s->t[i].cfg->name,
				   s->t[i].gindex);
	for (uint32_t r = 0; r < s->n_replicas; r++)
		trace_name(s->opt.trace, TRACE_GPU, r, "replica %u", r);
}

/* The cloud's draft models: one cost per distinct (model, bytes a weight)
 * among the groups whose cloud drafts, so that groups sharing a draft read
 * its weights once an iteration. */
static void init_drafts(struct sim *s)
{
	const struct cfg *c = s->cfg;
	size_t *first = xmalloc(c->n_groups * sizeof(*first)); /* of a draft */

	s->draft_of = xmalloc(c->n_groups * sizeof(*s->draft_of));
	s->dcost = xcalloc(c->n_groups, sizeof(*s->dcost));
	s->dbatch = xcalloc(c->n_groups, sizeof(*s->dbatch));
	for (size_t g = 0; g < c->n_groups; g++) {
		const struct cfg_draft *d = &c->groups[g].proto.draft;
		uint32_t k = 0;

		s->draft_of[g] = UINT32_MAX;
		if (!c->groups[g].proto.caps.cloud_drafts)
			continue;
		while (k < s->n_drafts &&
		       !cfg_draft_same(&c->groups[first[k]].proto.draft, d))
			k++;
		if (k == s->n_drafts) {
			first[k] = g;
			cost_init_draft(&s->dcost[s->n_drafts++], &c->cloud, d);
		}
		s->draft_of[g] = k;
	}
	free(first);
}

/* Whether n tenants' state alone outgrows this machine's memory: then
 * the run fails at once (sim_run returns -1), e saying so, instead of an
 * allocation aborting it. */
static bool too_many(struct sim *s, uint32_t n)
{
	double need = (double)n * sizeof(struct tenant);
	double have = (double)sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE);

	if (have <= 0 || need <= have)
		return false;
	err_set(s->err, "%u tenants need at least %.1f GB (%zu bytes "
		"each before they run; a run grows to about 4 KB a tenant), "
		"but this machine has %.1f GB: simulate fewer tenants",
		n, need / 1e9, sizeof(struct tenant), have / 1e9);
	s->failed = true;
	return true;
}

void sim_init(struct sim *s, const struct cfg *c, struct sim_opts opt,
	      struct err *e)
{
	uint32_t n = 0;

	*s = (struct sim){ .cfg = c, .opt = opt, .err = e, .bin_s = 1 };
	eq_init(&s->q);
	cost_init(&s->cost, &c->cloud);
	init_drafts(s);
	s->group_first = xcalloc(c->n_groups + 1, sizeof(*s->group_first));
	s->group_gpu_s = xcalloc(c->n_groups, sizeof(*s->group_gpu_s));
	s->group_tok = xcalloc(c->n_groups, sizeof(*s->group_tok));
	for (size_t g = 0; g < c->n_groups; g++) {
		const struct cfg_group *cg = &c->groups[g];

		s->group_first[g] = n;
		n += (uint32_t)cg->count;
	}
	s->group_first[c->n_groups] = n;
	if (too_many(s, n))
		return;
	s->n_tenants = n;
	s->t = xcalloc(n, sizeof(*s->t));
	s->sched = &sched_ops[c->cloud.policy];
	s->kv = &kv_ops[c->cloud.kv_policy];
	s->kv_blocks = cfg_kv_blocks(&c->cloud);
	s->kv_watermark = cfg_kv_watermark_blocks(&c->cloud);
	s->n_replicas = s->sched->replica_per_tenant ? n
						     : (uint32_t)c->cloud.replicas;
	s->r = xcalloc(s->n_replicas, sizeof(*s->r));
	for (uint32_t i = 0; i < s->n_replicas; i++) {
		kvpool_init(&s->r[i].kv, s->kv_blocks, c->cloud.block_tokens);
		s->r[i].window_ev = EQ_NONE;
		sk_init(&s->r[i].batch_tokens);
		sk_init(&s->r[i].queue_wait);
		sk_init(&s->r[i].admit_wait);
	}
	for (size_t g = 0; g < c->n_groups; g++) {
		const struct cfg_group *cg = &c->groups[g];

		for (uint32_t i = 0; i < (uint32_t)cg->count; i++) {
			struct tenant *t = &s->t[s->group_first[g] + i];

			t->group = (uint32_t)g;
			t->cfg = cg;
			t->id = s->group_first[g] + i;
			t->gindex = i;
			rng_stream_init(&t->work_rng, c->seed,
				rng_stream_id("%s/%u/work", cg->name, i));
			rng_stream_init(&t->net_rng, c->seed,
				rng_stream_id("%s/%u/net", cg->name, i));
			rng_stream_init(&t->acc_rng, c->seed,
				rng_stream_id("%s/%u/accept", cg->name, i));
			t->edge.gamma = cg->proto.gamma;
			t->edge.window = cg->proto.window;
			link_init(&t->up, cg->wan.up_bps);
			link_init(&t->down, cg->wan.down_bps);
			if (cfg_proto_drafts(&cg->proto.caps))
				acc_init(&t->acc, &cg->accept, &cg->acc_trace,
					 &t->acc_rng.gen);
			sk_init(&t->rq_itl);
			sk_init(&t->st.itl);
			sk_init_exact(&t->st.ttft);
			sk_init_exact(&t->st.tpot);
		}
	}
	name_tracks(s);
}

void sim_release(struct sim *s)
{
	free(s->bin_tokens);
	free(s->bin_gpu_s);
	for (uint32_t i = 0; s->t && i < s->n_tenants; i++) {
		struct tenant *t = &s->t[i];

		link_release(&t->up);
		link_release(&t->down);
		wl_ring_release(&t->pending);
		blk_ring_release(&t->edge.inflight);
		blk_ring_release(&t->cloud.cq);
		sk_release(&t->rq_itl);
		sk_release(&t->st.itl);
		sk_release(&t->st.ttft);
		sk_release(&t->st.tpot);
	}
	for (uint32_t i = 0; s->r && i < s->n_replicas; i++) {
		fifo_release(&s->r[i].ready);
		fifo_release(&s->r[i].prefill);
		fifo_release(&s->r[i].admit);
		free(s->r[i].run);
		free(s->r[i].batch);
		sk_release(&s->r[i].batch_tokens);
		sk_release(&s->r[i].queue_wait);
		sk_release(&s->r[i].admit_wait);
	}
	free(s->group_first);
	free(s->draft_of);
	free(s->group_gpu_s);
	free(s->group_tok);
	free(s->dcost);
	free(s->dbatch);
	free(s->t);
	free(s->r);
	eq_release(&s->q);
}

int sim_run(struct sim *s)
{
	static const volatile sig_atomic_t never = 0;
	const struct cfg *c = s->cfg;
	const volatile sig_atomic_t *stop = s->opt.stop ? s->opt.stop : &never;
	double horizon_s = c->horizon_s > 0 ? c->horizon_s : INFINITY;
	const struct tenant *soon;
	struct eq_event ev;
	double t;

	for (uint32_t i = 0; i < s->n_tenants; i++) {
		struct tenant *tn = &s->t[i];
		const struct cfg_workload *w = &tn->cfg->workload;
		gsl_rng *r = &tn->work_rng.gen;

		if (w->arrival == ARRIVAL_TRACE)
			schedule_arrival(s, tn);
		else if (w->arrival == ARRIVAL_POISSON &&
			 isfinite(t = rate_next_s(&w->rate,
						  dist_sample(&w->start_s, r), r)))
			push(s, t, EV_ARRIVE, i);
		else if (w->arrival == ARRIVAL_POISSON)
			continue; /* the rate is 0 for ever from its start */
		else
			push(s, dist_sample(&w->start_s, r), EV_ARRIVE, i);
	}
	while (!s->failed && !*stop && eq_pop(&s->q, &t, &ev)) {
		if (t > horizon_s) {
			s->end_s = c->horizon_s;
			for (uint32_t i = 0; i < s->n_replicas; i++)
				if (s->r[i].busy)
					batch_measured(s, &s->r[i], s->end_s);
			return 0;
		}
		if (t > SIM_TIME_MAX_S) {
			err_set(s->err, "simulated time passed %.0e s (%.0f "
				"years): a time, a rate or a cost in the config "
				"is out of scale", SIM_TIME_MAX_S,
				SIM_TIME_MAX_S / 3.15576e7);
			s->failed = true;
			break;
		}
		s->events++;
		s->end_s = t;
		if (s->opt.tick && s->events % SIM_TICK_EVENTS == 0)
			s->opt.tick(s->opt.tick_ctx, s);
		if ((soon = tenant_of(s, eq_upcoming(&s->q, 1))) != NULL)
			prefetch_state(soon);
		if ((soon = tenant_of(s, eq_upcoming(&s->q, 0))) != NULL)
			prefetch_pointees(soon);
		switch ((enum ev_kind)ev.kind) {
		case EV_ARRIVE:
			on_arrive(s, &s->t[ev.id]);
			break;
		case EV_EDGE_PREFILL:
			on_edge_prefill(s, &s->t[ev.id]);
			break;
		case EV_DRAFT:
			on_draft(s, &s->t[ev.id]);
			break;
		case EV_EDGE_TOKEN:
			on_edge_token(s, &s->t[ev.id]);
			break;
		case EV_UP:
			on_up(s, &s->t[ev.id]);
			break;
		case EV_DOWN:
		case EV_DOWN_HELD:
			on_down(s, &s->t[ev.id], ev.kind == EV_DOWN_HELD);
			break;
		case EV_BATCH:
			on_batch(s, ev.id);
			break;
		case EV_WINDOW:
			s->r[ev.id].window_ev = EQ_NONE;
			try_start(s, ev.id);
			break;
		}
	}
	return s->failed || *stop ? -1 : 0;
}
