/* cfg.h: the simulation config, read strictly from JSON.
 *
 * cfg_load reads a file (cfg_parse a document in memory), applies --set
 * overrides, checks every value and fills in defaults, both in the struct
 * and in the document (cfg.doc), so that dumping cfg.doc gives
 * config.resolved.json. The schema is documented in docs/config.md. */
#ifndef HS_CFG_H
#define HS_CFG_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include <stdbool.h>

#include "accept.h"
#include "dist.h"
#include "energy.h"
#include "err.h"
#include "gpu.h"
#include "rate.h"
#include "shape.h"
#include "optab.h"
#include "vtab.h"
#include "wake.h"
#include "workload.h"

/* A time in a config, in seconds, is at most CFG_TIME_MAX_S (31.7
 * years): sums of them stay far from overflowing, and a run they push
 * out of scale meets sim.h's SIM_TIME_MAX_S and stops with a message.
 * CFG_TIME: > 0; CFG_TIME0: >= 0. */
#define CFG_TIME_MAX_S 1e9
#define CFG_TIME ((struct jx_range){ 0, CFG_TIME_MAX_S, true, false })
#define CFG_TIME0 ((struct jx_range){ 0, CFG_TIME_MAX_S, false, false })

/* A power in watts is at most CFG_WATTS_MAX (a megawatt), an energy at
 * most a megajoule (a bit's at most a joule), a memory in bytes at most CFG_BYTES_MAX (a
 * petabyte), a weight's bytes at most 16: sums and products of them stay
 * finite in every figure a run reports */
#define CFG_WATTS_MAX 1e6
#define CFG_WATTS ((struct jx_range){ 0, CFG_WATTS_MAX, false, false })
#define CFG_JOULES ((struct jx_range){ 0, 1e6, false, false })
#define CFG_J_PER_BIT ((struct jx_range){ 0, 1, false, false })
#define CFG_BYTES_MAX 1e15
#define CFG_BYTES ((struct jx_range){ 0, CFG_BYTES_MAX, false, false })
#define CFG_MEM_BYTES ((struct jx_range){ 0, CFG_BYTES_MAX, true, false })
#define CFG_WEIGHT_BYTES ((struct jx_range){ 0, 16, true, false })

/* The window policy's wait for a batch to fill, where a config gives
 * none */
#define CFG_WINDOW_DEFAULT_S 0.002

/* The longest config name, which names its results folder: a file
 * system's NAME_MAX */
#define CFG_NAME_MAX 255

/* A name (obj["name"] at ptr where given, else its default) the files it
 * ends up in can hold: one that names a results folder (folder: a
 * config's, a sweep's) not empty, "." or "..", at most CFG_NAME_MAX bytes,
 * no '/'; any name a CSV field (no ',', '"' or control character). 0, or
 * -1 with x's error. */
int cfg_check_name(struct jx *x, json_t *obj, const char *ptr,
		   const char *name, bool folder, bool given);

/* What a protocol does. The simulator and the deployment test these, never
 * the protocol's kind, so that a new protocol is a row of PROTO_LIST (and
 * the code of what is new in it). */
struct proto_caps {
	bool uses_edge;  /* the device computes: it drafts, or makes every token */
	bool uses_cloud; /* requests go to a replica: the prompt goes up */
	bool speculates; /* the edge drafts blocks that the cloud verifies */
	bool windowed;   /* the edge drafts on while blocks are in flight */
	bool cloud_drafts; /* the cloud drafts with a model of its own and
			      verifies its own drafts */
	bool hands_over; /* the cloud may serve a request's first tokens
			    while the edge prefills, then hand it over */
};

/* A protocol's gamma (draft tokens a block) where the config gives none */
#define CFG_GAMMA_DEFAULT 4

/* The protocols: X(KIND, name, uses_edge, uses_cloud, speculates,
 * windowed, cloud_drafts, hands_over); docs/protocols.md gives each one's
 * rules. */
#define PROTO_LIST(X)                                                    \
	X(EDGE_ONLY, "edge_only", true, false, false, false, false, false) \
	X(CLOUD_ONLY, "cloud_only", false, true, false, false, false, false) \
	X(SYNC, "sync", true, true, true, false, false, true)             \
	X(ASYNC, "async", true, true, true, true, false, true)            \
	X(CLOUD_SPEC, "cloud_spec", false, true, false, false, true, false)

#define PROTO_ENUM(kind, ...) PROTO_##kind,
enum proto_kind { PROTO_LIST(PROTO_ENUM) PROTO_N };
#undef PROTO_ENUM

/* Names indexed by enum proto_kind, NULL-terminated; the capabilities. */
extern const char *const cfg_proto_names[];
const struct proto_caps *cfg_proto_caps(enum proto_kind k);
/* Whether a protocol's drafts are verified (on the edge or in the cloud),
 * so that it needs an acceptance model. */
bool cfg_proto_drafts(const struct proto_caps *c);

/* The draft model: its shape and format for what it costs where it runs
 * (the cloud, in cloud_spec), and for the checks against the target. */
struct cfg_draft {
	struct shape model;  /* default: the target's shape */
	double weight_bytes; /* bytes a weight; default 0.53 (W4A16 g128) */
	struct vtab table;   /* measured cost in the cloud (nt 0: roofline) */
};

/* Whether two drafts are one model the cloud can share: the same model,
 * bytes a weight and measured table (or neither measured). */
bool cfg_draft_same(const struct cfg_draft *a, const struct cfg_draft *b);

/* Adaptive speculation (docs/protocols.md): after each verdict a tenant
 * picks its next gamma in [gamma_min, gamma_max] from its estimates of
 * alpha and of the verdict latency (exponentially weighted, weight
 * `weight`), and in async the smallest window that keeps it drafting. */
struct cfg_adapt {
	bool on;
	int gamma_min, gamma_max;
	double weight;      /* of the newest verdict in the estimates */
};

/* When the edge takes a request over from the cloud that served its first
 * tokens (docs/protocols.md, "Handover start"): never (the edge prefills,
 * then drafts; the cloud serves nothing itself), always (once the edge's
 * draft cache has caught up with the tokens streamed down), or only when
 * the edge's expected time a token beats the cloud's observed one. A
 * policy is a row here and its function (the third column) in sim.c. */
#define HANDOVER_LIST(X)                                                  \
	X(NEVER, "never", hand_never)                                     \
	X(ALWAYS, "always", hand_always)                                  \
	X(FASTER, "faster", hand_faster)

#define HANDOVER_ENUM(kind, ...) HANDOVER_##kind,
enum handover_policy { HANDOVER_LIST(HANDOVER_ENUM) HANDOVER_N };
#undef HANDOVER_ENUM
extern const char *const cfg_handover_names[];

/* When an edge that drafts hands the rest of a request back to the cloud,
 * which decodes it to its end as cloud_only (docs/protocols.md,
 * "Hand-back"): never, or when the cloud's time a token, as the edge
 * observes its verifications, beats the protocol's expected time a token
 * (hback.h). A policy is a row here and its function (the third column)
 * in sim.c. */
#define HANDBACK_LIST(X)                                                  \
	X(NEVER, "never", back_never)                                     \
	X(FASTER, "faster", back_faster)

#define HANDBACK_ENUM(kind, ...) HANDBACK_##kind,
enum handback_policy { HANDBACK_LIST(HANDBACK_ENUM) HANDBACK_N };
#undef HANDBACK_ENUM
extern const char *const cfg_handback_names[];

struct cfg_protocol {
	enum proto_kind kind;
	struct proto_caps caps; /* cfg_proto_caps(kind) */
	int gamma;  /* draft tokens per block (speculating protocols); the
		       first block's when adaptive */
	int window; /* blocks in flight at most; 1 unless windowed */
	struct cfg_adapt adapt;
	enum handover_policy handover; /* NEVER unless caps.hands_over */
	enum handback_policy handback; /* NEVER unless caps.hands_over */
	struct cfg_draft draft; /* where cfg_proto_drafts(&caps) */
};

struct cfg_device {
	/* draft time of one token at context length ctx:
	 * draft_base_s + draft_per_ctx_s * ctx */
	double draft_base_s, draft_per_ctx_s;
	/* prompt prefill of n tokens on the edge:
	 * prefill_base_s + prefill_per_token_s * n */
	double prefill_base_s, prefill_per_token_s;
	/* seconds of a forward pass that feeds two tokens (a bonus token
	 * with the last draft before it); 0: not measured */
	double draft_pair_s;
	struct wake wake;    /* a block's first pass after the device idled */
	/* power while computing (drafting, prefilling, making tokens) and
	 * while waiting with a request open; the battery (0: not known, or
	 * none); a profile's "power" gives their defaults */
	double power_busy_w, power_idle_w, battery_wh;
	/* passes "whole" (false): a verdict waits for the forward pass in
	 * progress, and a bonus token is fed in the next block's first pass;
	 * "ideal" (true), the paper's edge: a rejection stops the pass at
	 * once, and feeding the bonus token costs nothing */
	bool ideal_passes;
	const char *profile; /* borrowed from doc: the edge profile file the
				costs came from, or NULL (none, or inline) */
	char model[64];      /* the profile's draft model, or "" */
};

/* The arrival processes: X(KIND, name); docs/config.md gives each one's
 * keys. */
#define ARRIVAL_LIST(X)             \
	X(CLOSED, "closed")         \
	X(POISSON, "poisson")       \
	X(TRACE, "trace")

#define ARRIVAL_ENUM(kind, name) ARRIVAL_##kind,
enum arrival_kind { ARRIVAL_LIST(ARRIVAL_ENUM) };
#undef ARRIVAL_ENUM

/* Names indexed by enum arrival_kind, NULL-terminated */
extern const char *const cfg_arrival_names[];

struct cfg_workload {
	enum arrival_kind arrival;
	long long requests;      /* per tenant (closed and poisson) */
	struct rate_table rate;  /* poisson: request rate of one tenant */
	double rate_per_s;       /* poisson: its mean (rate_mean) */
	struct dist prompt_tokens, output_tokens; /* draws rounded, >= 1 */
	struct dist think_s;     /* closed: pause after each request */
	struct dist start_s;     /* first activity of each tenant */
	const char *trace;       /* borrowed from doc: arrival trace, resolved
				    path; NULL unless arrival is trace */
	const char *trace_format; /* static: a name of wl_format_names */
	double trace_speed;      /* the trace replayed this many times as
				    fast (arrival times divided by it) */
	const char *trace_tokenizer; /* borrowed: a model whose tokenizer
					counts a text trace's tokens, or
					NULL */
	double trace_rate_per_s; /* a trace without times: Poisson arrivals
				    at this rate (0: not given) */
};

struct cfg_wan {
	struct dist rtt_s;   /* round trip; one-way delay is half a draw */
	/* from rtt_step_at_s on (0: never), messages sent draw their round
	 * trip from rtt_after_s */
	double rtt_step_at_s;
	struct dist rtt_after_s;
	/* nothing leaves the edge or the cloud from blackout_at_s for
	 * blackout_for_s (0: never); a message sent meanwhile leaves at the
	 * end; one already on its way arrives as usual */
	double blackout_at_s, blackout_for_s;
	double up_bps, down_bps; /* bits per second, edge->cloud, cloud->edge */
	double loss;         /* probability that a message is lost */
	double rto_s;        /* retransmission timeout after a loss */
	long long header_bytes; /* per message: transport and framing */
	/* per message, added to its one-way delay: the time the two hosts'
	 * software (network stacks, thread hand-offs) takes to pass it on;
	 * the simulator's alone, a real deployment spends its own */
	double stack_s;
	struct radio radio;  /* the edge's radio: its power model */
};

struct cfg_slo {
	double ttft_s; /* time to first token */
	double tpot_s; /* mean time per output token of a request */
};

struct cfg_group {
	const char *name;    /* borrowed from doc */
	long long count;     /* tenants in the group */
	struct cfg_slo slo;  /* default: the config's */
	struct cfg_protocol proto;
	bool own_protocol;   /* its own /tenants/N/protocol, not the config's */
	struct cfg_device device;
	struct cfg_workload workload;
	struct cfg_accept accept;
	struct cfg_wan wan;
	/* the files it names, read and checked at load (n 0: none) */
	struct acc_trace acc_trace; /* accept.model trace: the bits */
	struct wl_trace wl_trace;   /* workload.arrival trace: the rows */
};

enum router_kind { ROUTER_ROUND_ROBIN, ROUTER_LEAST_LOADED };

/* The cloud's scheduling policies, a row each: X(POLICY, name, deployed,
 * replica_per_tenant, route, hold, form_batch). deployed: the real verifier
 * (deploy/verifier.c) runs it too; hold is hold_never or hold_window (cfg.c
 * reads which). The last four are the simulator's
 * (sim.c's sched_ops, where the functions are; only sim.c expands them):
 * whether each tenant has a replica of its own, where a tenant's work
 * goes, whether an idle replica waits for more, how it fills a batch.
 * docs/config.md says what each policy does. */
#define SCHED_LIST(X)                                                    \
	X(DEDICATED, "dedicated", false, true, route_own, hold_never,      \
	  form_fifo)                                                      \
	X(CONTINUOUS, "continuous", true, false, route_shared, hold_never, \
	  form_fifo)                                                      \
	X(WINDOW, "window", true, false, route_shared, hold_window,        \
	  form_fifo)                                                      \
	X(SLO, "slo", false, false, route_shared, hold_never,              \
	  form_least_slack)

#define SCHED_ENUM(policy, ...) SCHED_##policy,
enum sched_policy { SCHED_LIST(SCHED_ENUM) SCHED_N };
#undef SCHED_ENUM

/* Names indexed by enum sched_policy, NULL-terminated; whether the real
 * deployment runs a policy; how long an idle replica under it waits for a
 * fuller batch when the window policy's wait is window_s (0: it never
 * does). */
extern const char *const cfg_sched_names[];
bool cfg_sched_deployed(enum sched_policy p);
double cfg_sched_hold_s(enum sched_policy p, double window_s);

/* The index of name in a NULL-terminated name table (cfg_proto_names,
 * cfg_sched_names), or -1. */
int cfg_name_find(const char *const *names, const char *name);

/* How a replica holds the KV cache, a row each: X(POLICY, name, blocks,
 * grow). The pool is kv_capacity_tokens in blocks of block_tokens; blocks
 * (sim.c) is what a request needs to be admitted, grow whether a sequence
 * takes blocks as its tokens arrive (preempting when none are free) or
 * holds them from admission. docs/config.md says what each does. */
#define KV_LIST(X)                                                        \
	X(PAGED, "paged", kv_admit_paged, true)                           \
	X(RESERVE, "reserve", kv_admit_reserve, false)

#define KV_ENUM(policy, ...) KV_##policy,
enum kv_policy { KV_LIST(KV_ENUM) KV_N };
#undef KV_ENUM

extern const char *const cfg_kv_names[]; /* by enum kv_policy */

/* Whether a policy's sequences take blocks as their tokens arrive. */
bool cfg_kv_grows(enum kv_policy p);

/* The paged pool's preemption order, the simulator's and the verifier's:
 * vLLM preempts from the tail of its running queue, the request whose
 * prompt came last (of two at once, the higher id); whether a (its prompt
 * at a_s) goes before b */
static inline bool cfg_preempts_first(double a_s, uint64_t a, double b_s,
				      uint64_t b)
{
	return a_s > b_s || (a_s == b_s && a > b);
}

/* How a GPU without a measured table prices an iteration (cost.h). */
enum gpu_pricing { PRICING_DERIVED, PRICING_ROOFLINE };

struct cfg_gpu {
	const char *preset;  /* borrowed: the preset its figures start from, or
				NULL (all given) */
	struct gpu_spec spec; /* the figures: the preset's, with what the
				 config gives in their place */
	double eta_bw;       /* achieved fraction of peak memory bandwidth */
	double eta_flops;    /* achieved fraction of peak FP16 FLOP/s */
	double overhead_s;   /* fixed cost of one iteration (launches, sync) */
	enum gpu_pricing pricing;
	const char *table;   /* borrowed: measured verify-cost table, or NULL */
	struct vtab vtab;    /* the table read at load (nt 0: none) */
	struct optab ops;    /* the operator table read at load (tp 0: none) */
	struct wake wake;    /* an iteration after the GPU idled */
};

struct cfg_cloud {
	long long replicas;
	enum router_kind router;
	enum sched_policy policy;
	long long max_batch_tokens;   /* token budget of one iteration */
	long long prefill_chunk_tokens; /* largest prefill piece per iteration */
	double window_s;              /* window policy: wait to fill a batch */
	long long max_num_seqs;       /* sequences a replica holds at once */
	long long kv_capacity_tokens; /* per replica: the KV pool (its whole
					 blocks) */
	enum kv_policy kv_policy;
	long long block_tokens;       /* tokens a KV block */
	double watermark;             /* paged: share of the pool an admission
					 leaves free */
	double gpu_memory_utilization; /* share of each GPU's memory the
					  server takes */
	double activation_bytes;      /* a GPU's memory kept for activations
					 and the runtime */
	const struct gpu_dtype *weight_dtype; /* static: the target's */
	const struct gpu_dtype *kv_dtype;     /* static: the KV cache's */
	double kv_token_bytes;        /* K and V of a token, every model the
					 cloud runs for it (a draft's too) */
	long long context_tokens; /* the positions a request may span: the
				     model's context unless given; 0: not
				     known (no limit) */
	struct shape model;           /* the target model */
	double weight_bytes;          /* bytes per target weight (its
					 dtype's unless given) */
	int tp;                       /* GPUs a replica, tensor-parallel */
	struct gpu_link link;         /* between them */
	struct cfg_gpu gpu;
};

struct cfg {
	json_t *doc;          /* owned: the resolved document */
	char *file;           /* owned: the path it was read from */
	const char *name;     /* borrowed from doc */
	uint64_t seed;
	double horizon_s;     /* stop at this simulated time; 0: run to the end */
	double warmup_s;      /* the statistics are of what happens after it:
				 requests finished (with all their tokens),
				 ITL gaps, prompts sent, GPU iterations and
				 admissions begun (0: all) */
	struct cfg_slo slo;
	struct cfg_group *groups; /* (n_groups) owned */
	size_t n_groups;
	struct cfg_cloud cloud;
	char *warnings;       /* owned: what the config asks that the
				 simulator does not do, a line each
				 ("POINTER: ..."), or NULL */
};

/* A group's mean prompt and output lengths, tokens: its trace's rows'
 * where it replays one, else its distributions' means. */
struct cfg_lengths {
	double prompt_tokens, output_tokens;
};
struct cfg_lengths cfg_mean_lengths(const struct cfg_group *g);

/* Loads path, applies the n_sets overrides "POINTER=VALUE" in order, and
 * checks everything. Returns 0 (c->warnings says what it asks that will
 * not be done: a window a protocol does not keep, a rate the arrivals do
 * not take, requests a rate that falls to 0 never brings), or -1 with e's
 * message (and c released). An error at or below a pointer an override
 * set, or above one, says so, naming it "BY POINTER=VALUE"; by NULL: not
 * (the caller's message says where its overrides come from). cfg_load
 * is the command line's: by "--set". */
int cfg_load_from(struct cfg *c, const char *path, const char *const *sets,
		  size_t n_sets, const char *by, struct err *e);
int cfg_load(struct cfg *c, const char *path, const char *const *sets,
	     size_t n_sets, struct err *e);
/* The same from a document in memory, which c takes (its reference is
 * c's, also on failure). file names the document in messages and places
 * it: relative paths in it are resolved against file's folder, and its
 * name is the config's default /name. */
int cfg_parse(struct cfg *c, json_t *doc, const char *file,
	      const char *const *sets, size_t n_sets, const char *by,
	      struct err *e);
void cfg_release(struct cfg *c);

/* The resolved document as text. Caller frees. */
char *cfg_resolved(const struct cfg *c);

/* A cloud without a config: one replica of one GPU of the named preset
 * running model (copied) in FP16, with the default efficiencies and no
 * table; for calib and the tests. -1 if the preset is unknown. */
/* The replica's pool in whole blocks, and the blocks the paged
 * policy's watermark keeps free at an admission (vLLM 0.6: int(watermark x
 * blocks)). */
long long cfg_kv_blocks(const struct cfg_cloud *cl);
long long cfg_kv_watermark_blocks(const struct cfg_cloud *cl);
int cfg_cloud_default(struct cfg_cloud *cl, const char *gpu,
		      const struct shape *model);

/* Reads a WAN link object (the schema of /tenants/i/wan) from v, named
 * name in messages; defaults are filled into v. Release it with
 * cfg_wan_release. */
int cfg_wan_read(const char *name, json_t *v, struct cfg_wan *out,
		 struct err *e);
void cfg_wan_release(struct cfg_wan *w);

/* The round-trip distribution of a message sent at t_s. */
static inline const struct dist *cfg_wan_rtt(const struct cfg_wan *w,
					     double t_s)
{
	return w->rtt_step_at_s > 0 && t_s >= w->rtt_step_at_s
		       ? &w->rtt_after_s : &w->rtt_s;
}

/* When a message sent at t_s leaves: at t_s, or at the blackout's end. */
static inline double cfg_wan_leave_s(const struct cfg_wan *w, double t_s)
{
	double end = w->blackout_at_s + w->blackout_for_s;

	return w->blackout_for_s > 0 && t_s >= w->blackout_at_s && t_s < end
		       ? end : t_s;
}

#endif
