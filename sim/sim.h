/* sim.h: the hybrid serving simulator.
 *
 * Tenants (edge devices) issue requests and run one protocol each
 * (edge_only, cloud_only, sync, async: docs/design.md, section 4, and
 * docs/protocols.md for every rule); WAN links carry prompts, draft blocks,
 * verdicts and tokens; cloud replicas batch the work of many tenants. The
 * state lives in arrays indexed by tenant and replica number; events name
 * them by index. */
#ifndef HS_SIM_H
#define HS_SIM_H

#include <gsl/gsl_rng.h>
#include <signal.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "accept.h"
#include "adapt.h"
#include "cfg.h"
#include "cost.h"
#include "eq.h"
#include "fmt.h"
#include "hback.h"
#include "kvpool.h"
#include "link.h"
#include "ring.h"
#include "rng.h"
#include "sketch.h"
#include "trace.h"
#include "workload.h"

/* The steady window's bins of simulated time: 1 s each up to this many
 * (12 days), wider beyond (sim's bin_s) */
#define SIM_BINS_MAX ((size_t)1 << 20)
/* The simulated time a run may reach (317 years): past it an input (a
 * time, a rate, a cost) is out of scale, and the run stops with that
 * message. */
#define SIM_TIME_MAX_S 1e10

/* A draft block, on the edge (in flight) or queued at the cloud. */
struct blk {
	uint32_t epoch;
	int32_t g;       /* draft tokens */
	int32_t base;    /* output position of its first token */
	double t_s;      /* when it was sent (edge), queued (cloud) */
};

RING_DEFINE(blk_ring, struct blk)
RING_DEFINE(wl_ring, struct wl_row)  /* requests waiting to start */
RING_DEFINE(fifo, uint32_t)          /* tenant numbers */

/* The counters a request keeps, which its tenant, group and run sum:
 * X(name, meaning). The message ledger (blocks_sent .. token_msgs) counts
 * what was sent where it is made. */
#define REQ_COUNTERS(X)                                                   \
	X(verdicts, "verdicts that committed tokens")                     \
	X(judged, "draft positions the target compared")                  \
	X(accepted, "draft tokens accepted")                              \
	X(drafted, "draft tokens made")                                   \
	X(wasted, "draft tokens thrown away, never accepted")             \
	X(bytes_up, "bytes sent from the edge to the cloud")              \
	X(bytes_down, "bytes sent from the cloud to the edge")            \
	X(blocks_sent, "draft blocks sent")                               \
	X(draft_sent, "draft tokens sent")                                \
	X(verdict_msgs, "verdict messages received")                      \
	X(token_msgs, "token messages received")                          \
	X(preemptions, "times the cloud preempted it (freed its KV cache, " \
	  "to compute it again)")                                          \
	X(handed_over, "handed over to the edge after the cloud served its " \
	  "first tokens (1 a request)")                                    \
	X(cloud_made, "output tokens the cloud decoded itself before the "  \
	  "handover (a handover start)")                                    \
	X(catchup, "tokens the edge prefilled to catch up with those the "  \
	  "cloud streamed down")                                            \
	X(ready_msgs, "READY messages sent up (a handover start)")        \
	X(handed_back, "handed back to the cloud, which decoded the rest "  \
	  "(1 a request; its BACK message up)")                            \
	X(back_made, "output tokens the cloud decoded after a hand-back")

/* The counters a tenant keeps beside its requests' sums. */
#define TENANT_COUNTERS(X)                                                \
	X(requests, "requests finished")                                  \
	X(tokens, "output tokens committed")                              \
	X(prompt_sent, "prompt tokens sent to the cloud")                 \
	X(slo_met, "requests that met both SLOs")                         \
	X(ttft_met, "requests that met the TTFT SLO")                     \
	X(tpot_met, "requests that met the TPOT SLO")                     \
	X(slo_tokens, "output tokens of those requests")

#define STAT_FIELD(name, meaning) uint64_t name;

/* The columns of requests.csv, a row per finished request: X(name, printf
 * format, value, meaning). The values are expressions of the row's tenant t
 * and request q (struct req_stat), written by sim.c, which has the helpers
 * they name; the header and the column list (`run --columns`) come from
 * the names and meanings. */
/* For a column list's X: the name into the header line, or the value into
 * a row, after a comma but for the first (sep, a const char *, starts
 * as ""). */
#define CSV_NAME(name, fmt, value, meaning)                               \
	(fprintf(f, "%s%s", sep, #name), sep = ",");
#define CSV_VALUE(name, fmt, value, meaning)                              \
	(fputs(sep, f), fmt_field(f, fmt, value), sep = ",");

#define REQ_CSV_COLUMNS(X)                                                 \
	X(group, "%s", t->cfg->name, "the tenant's group")             \
	X(tenant, "%u", t->gindex, "the tenant's number in its group")     \
	X(request, "%llu", (unsigned long long)q->index,                   \
	  "the request's number at its tenant, from 0")                    \
	X(arrive_s, "%.9g", q->arrive_s, "when it arrived, s")              \
	X(start_s, "%.9g", q->start_s, "when the tenant began it, s")       \
	X(ttft_s, "%.9g", req_ttft_s(q),                                    \
	  "time to its first token from its arrival, s")                   \
	X(done_s, "%.9g", q->done_s, "when its last token was committed, s")\
	X(prompt_tokens, "%d", q->prompt, "prompt length, tokens")          \
	X(output_tokens, "%d", q->n_out, "output length, tokens")           \
	X(tpot_s, "%.9g", req_tpot_s(q),                                    \
	  "time per output token after the first, s (nan: one token)")     \
	X(itl_p50_s, "%.9g", t->rq_itl.n ? sk_quantile(&t->rq_itl, 0.5)    \
	  : NAN, "inter-token latency, median, s (nan: one token)")        \
	X(itl_p99_s, "%.9g", t->rq_itl.n ? sk_quantile(&t->rq_itl, 0.99)   \
	  : NAN, "inter-token latency, 99th percentile, s (nan: one "       \
	  "token)")                                                        \
	X(alpha, "%.9g", q->judged ? (double)q->accepted / (double)q->judged\
	  : 0, "share of compared draft positions accepted")               \
	X(verdicts, "%llu", (unsigned long long)q->verdicts,                \
	  "verdicts that committed tokens")                                \
	X(drafted, "%llu", (unsigned long long)q->drafted, "draft tokens made")\
	X(accepted, "%llu", (unsigned long long)q->accepted,                \
	  "draft tokens accepted")                                         \
	X(wasted, "%llu", (unsigned long long)q->wasted,                    \
	  "draft tokens thrown away, never accepted")                      \
	X(bytes_up, "%llu", (unsigned long long)q->bytes_up,                \
	  "bytes sent from the edge to the cloud")                         \
	X(bytes_down, "%llu", (unsigned long long)q->bytes_down,            \
	  "bytes sent from the cloud to the edge")                         \
	X(preemptions, "%llu", (unsigned long long)q->preemptions,          \
	  "times the cloud preempted it (its KV cache computed again)")    \
	X(handed_over, "%llu", (unsigned long long)q->handed_over,          \
	  "1 if the cloud served its first tokens, then handed it over")   \
	X(cloud_made, "%llu", (unsigned long long)q->cloud_made,            \
	  "output tokens the cloud decoded before the handover")           \
	X(catchup, "%llu", (unsigned long long)q->catchup,                  \
	  "tokens the edge prefilled to catch up with the cloud's")        \
	X(handed_back, "%llu", (unsigned long long)q->handed_back,          \
	  "1 if the edge handed the rest back to the cloud")               \
	X(back_made, "%llu", (unsigned long long)q->back_made,              \
	  "output tokens the cloud decoded after the hand-back")           \
	X(slo_met, "%d", meets_slo(t, q), "1 if it met both SLOs, else 0")

/* What a request's edge spends, which its tenant, group and run sum:
 * X(name, meaning). Seconds at the device's powers make its energy
 * (report.c): computing at power_busy_w, the rest of the request's time at
 * power_idle_w. */
#define REQ_ENERGY(X)                                                     \
	X(compute_s, "seconds the edge computed tokens (drafting, or making " \
	  "them all in edge_only)")                                         \
	X(prefill_s, "seconds the edge prefilled the prompt")               \
	X(radio_j, "joules of the edge's radio: its transfers and the tails " \
	  "they add (energy.h)")

#define ENERGY_FIELD(name, meaning) double name;

/* Per request counters; the row of requests.csv. */
struct req_stat {
	uint64_t index;        /* the tenant's request number */
	double arrive_s, start_s, first_s, last_s, done_s;
	int32_t prompt, n_out, committed;
	REQ_COUNTERS(STAT_FIELD)
	REQ_ENERGY(ENERGY_FIELD)
};

struct tenant_stat {
	struct sketch itl;     /* gaps between committed tokens (first: a
				  tenant's steps add to it, struct tenant) */
	TENANT_COUNTERS(STAT_FIELD)
	REQ_COUNTERS(STAT_FIELD)
	REQ_ENERGY(ENERGY_FIELD)
	double busy_s;         /* time with a request in progress */
	double edge_busy_s;    /* the device's computing and prefilling
				  done inside the measured window (after the
				  warm-up), whatever request it was for */
	double ttft_sum, tpot_sum;
	uint64_t tpot_n;       /* requests of two output tokens or more: those
				  with a time per output token after the
				  first (tpot_sum and the tpot sketch) */
	struct sketch ttft;
	struct sketch tpot;    /* each request's time per output token */
};

/* A tenant's device: its drafting, and the blocks it has sent. */
struct tenant_edge {
	uint32_t epoch;
	int32_t ahead;             /* tokens drafted past committed, this epoch */
	int32_t gamma, window;     /* the next block's; the protocol's unless
				      adaptive */
	struct adapt_est est;      /* adaptive: alpha and the latency */
	struct blk_ring inflight;  /* sent, no verdict yet */
	bool drafting;
	bool feed_bonus;           /* the bonus token committed last is fed
				      with the next block's first pass */
	int32_t draft_g, draft_ctx0;
	double draft_start_s;      /* when the block (edge_only: the token)
				      in progress began */
	double draft_lead_s;       /* the block's extra seconds before its
				      first pass ends: feeding the bonus
				      token too, waking the device */
	double idle_from_s;        /* when the device last stopped drafting */
	uint64_t draft_ev;         /* handle of the EV_DRAFT event */
	/* a handover start: the cloud decodes while the edge prefills its
	 * draft cache up to kv_pos output tokens (prefill_ev pending while it
	 * does), then says READY; the cloud's last token says where drafting
	 * starts. starting: the cloud still serves the request */
	bool starting, prefilling;
	bool ask_again;            /* the policy could not tell: ask it at the
				      next token that comes down */
	double prefill_start_s;    /* when the prefill in progress began */
	int32_t kv_pos, backlog;   /* backlog: the last catch-up's tokens */
	double feed_s;             /* seconds of tokens the next block's first
				      pass feeds too (the handover's last) */
	uint64_t prefill_ev;       /* handle of the EV_EDGE_PREFILL event */
	/* a hand-back: decided (handing_back), the edge drafts no more and
	 * waits for its blocks in flight; then BACK goes up (rq.handed_back)
	 * and the cloud decodes the rest. hb: the request's verdicts
	 * (hback.h) */
	bool handing_back;
	struct hb_est hb;
};

/* The cloud's session of a tenant's request: what it knows of it from the
 * PROMPT message, its replica, KV cache and queues. */
struct tenant_cloud {
	int32_t prompt, out;       /* the request's lengths */
	int32_t blocks;            /* KV blocks it holds */
	uint32_t replica;
	uint32_t run_at;           /* admitted: its place in the replica's run[] */
	uint32_t epoch;            /* the newest epoch it has seen */
	int32_t fill;              /* tokens its prefill computes: the prompt,
				      and the output so far after a preemption */
	int32_t prefill_left;      /* of fill, tokens yet to prefill */
	int32_t pos;               /* output position it has reached */
	int32_t kv_out;            /* output positions whose K and V it keeps */
	bool admitted, in_ready, in_prefill;
	bool in_batch;             /* an item of the forming or running batch */
	bool kv_whole;             /* its last verification accepted every
				      block: the target's own next token at
				      pos judges a block that starts there,
				      with no token fed before its drafts */
	bool decoding;             /* a handover start or a hand-back: it
				      decodes the request itself, as
				      cloud_only */
	bool stop_next;            /* READY came: its next token is its last */
	bool ready_later;          /* READY came during an iteration of it:
				      stop_next once that iteration ends */
	double prompt_s;           /* when its PROMPT arrived */
	double queued_s;           /* when its ready item was queued */
	struct blk_ring cq;        /* blocks queued */
};

/* A tenant: its streams, links and workload, the request in progress, its
 * edge and its cloud session, and the statistics of its finished requests. */
struct tenant {
	/* what its events touch, up to and including st.itl (TENANT_HOT) */
	uint32_t group, id;              /* id: its index in sim.t */
	const struct cfg_group *cfg;     /* borrowed: its group's */
	/* its random streams, in place (their generators: &x.gen) */
	struct rng_stream work_rng, net_rng, acc_rng;
	struct acc acc;
	struct link up, down;
	double radio_on_s;         /* its radio is connected until then */
	bool busy;                 /* a request is in progress */
	struct req_stat rq;
	struct sketch rq_itl;      /* the request's gaps */
	struct tenant_edge edge;
	struct tenant_cloud cloud;
	struct tenant_stat st;
	/* what only a request's start and end touch */
	uint32_t gindex;           /* its number in its group */
	uint64_t issued;           /* requests issued so far */
	double first_arrive_s;     /* its first request's arrival (issued) */
	double last_arrive_s;      /* its latest request's arrival */
	bool issued_all;           /* its workload has no request left */
	struct wl_ring pending;    /* requests waiting to start */
};

/* The bytes of a tenant that its events touch (prefetched ahead). */
#define TENANT_HOT (offsetof(struct tenant, st) + sizeof(struct sketch))

/* What a batch does for a tenant: verify blocks (the edge's, or, in
 * cloud_spec, the drafts the cloud's draft model makes for it in the same
 * iteration), decode a token on the target, or prefill a prompt chunk. */
enum item_kind { ITEM_VERIFY, ITEM_DECODE, ITEM_PREFILL };

struct item {
	uint32_t tenant;
	uint8_t kind;
	int32_t tokens;
	int32_t blocks;            /* verify: blocks taken from cq */
};

struct replica {
	bool busy;
	uint64_t window_ev;        /* EQ_NONE when no window is open */
	struct fifo ready, prefill;
	struct fifo admit;         /* requests waiting for admission, in order */
	uint32_t *run;             /* (active, in run_cap) owned: the admitted */
	uint32_t run_cap;
	struct kvpool kv;          /* the KV blocks its admitted requests hold */
	struct item *batch;        /* (batch_cap) the running iteration */
	uint32_t nbatch, batch_cap;
	double batch_start_s;
	double batch_s, batch_bytes, batch_flops; /* the running iteration's
						     time and traffic */
	double idle_from_s;        /* when its last batch ended */
	/* stats: busy_s, bytes and flops the share of each iteration inside
	 * the measured window; batches, tokens and the sketches those
	 * that start in it */
	double busy_s, bytes, flops;
	uint64_t batches, tokens, peak_active, preemptions;
	uint32_t active;
	struct sketch batch_tokens, queue_wait;
	struct sketch admit_wait;  /* PROMPT's arrival to admission */
};

struct sim;

struct sim_opts {
	struct trace *trace;       /* borrowed: the trace, or NULL */
	uint32_t trace_tenants;    /* tenants with tracks in the trace */
	FILE *requests_csv;        /* borrowed: a row per finished request */
	/* borrowed, or NULL: a flag a signal handler sets; once it is
	 * nonzero sim_run stops at the next event and returns -1 */
	const volatile sig_atomic_t *stop;
	/* NULL, or called with tick_ctx (borrowed) every SIM_TICK_EVENTS
	 * events: progress on long runs */
	void (*tick)(void *tick_ctx, const struct sim *s);
	void *tick_ctx;
};

#define SIM_TICK_EVENTS 65536

struct sched_ops;
struct kv_ops;

struct sim {
	const struct cfg *cfg;     /* borrowed */
	struct sim_opts opt;
	struct eq q;
	struct cost cost;          /* the target's */
	/* the cloud's draft models (cloud_spec), one per distinct draft:
	 * dcost[draft_of[g]] is group g's (draft_of[g] = UINT32_MAX: none) */
	struct cost *dcost;        /* (n_drafts) owned */
	struct cost_batch *dbatch; /* (n_drafts) owned: an iteration's */
	uint32_t *draft_of;        /* (n_groups) owned */
	uint32_t n_drafts;
	struct tenant *t;          /* (n_tenants) owned */
	uint32_t n_tenants;
	struct replica *r;         /* (n_replicas) owned */
	uint32_t n_replicas, rr_next;
	const struct sched_ops *sched; /* the policy's (sim.c's table) */
	const struct kv_ops *kv;   /* the KV policy's (sim.c's table) */
	int64_t kv_blocks;         /* a replica's pool */
	int64_t kv_watermark;      /* paged: blocks an admission leaves free */
	uint32_t *group_first;     /* (n_groups + 1) first tenant of each */
	/* GPU-seconds of each group's work (measured), an iteration's time
	 * shared among its items by their tokens; the tokens of an
	 * iteration's items by group, while it forms (else 0) */
	double *group_gpu_s;       /* (n_groups) owned */
	uint64_t *group_tok;       /* (n_groups) owned */
	/* tokens committed and GPU-seconds spent in each bin of simulated
	 * time, for the steady window (report.h): bin k is [k bin_s, (k + 1)
	 * bin_s); bin_s is 1 s until a run passes SIM_BINS_MAX of them, and
	 * doubles each time it would (neighbours merged), so the memory
	 * stays bounded however long the simulated time */
	double *bin_tokens, *bin_gpu_s; /* (n_bins, in bins_cap) owned */
	size_t n_bins, bins_cap;
	double bin_s;
	uint64_t events, stale_dropped, segment_discarded, requests_done;
	double end_s;              /* time of the last event */
	struct err *err;           /* borrowed: a run-time input error */
	bool failed;
};

/* Builds every tenant, replica and stream of c (which read every file it
 * names at load, and must outlive s). e (borrowed, or NULL) takes the
 * message of bad input met while running. */
void sim_init(struct sim *s, const struct cfg *c, struct sim_opts opt,
	      struct err *e);
void sim_release(struct sim *s);

/* Runs to the end (or the horizon). Returns -1 if an input turned out bad
 * on the way (a request longer than the KV capacity, simulated time past
 * SIM_TIME_MAX_S), with the message, or when opt.stop turned nonzero (no
 * message). */
int sim_run(struct sim *s);

/* One scheduling decision of the config's policy on replica ri, idle, as
 * the event loop takes it: whether it holds (waits for more work), else
 * its batch formed into s->r[ri].batch (for the policies' own tests). */
bool sim_sched_hold(struct sim *s, uint32_t ri);
void sim_sched_form(struct sim *s, uint32_t ri);

#endif
