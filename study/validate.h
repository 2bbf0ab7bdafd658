/* validate.h: what "hybridspec validate" does at each point, as a module:
 * measure the deployment's own costs on this machine (the draft's step and
 * prefill, the verifier's batch times, the draft/target agreement along the
 * target's continuations of the workload's prompts), run a point for real
 * (one serve process, one edge process per tenant, loopback TCP, the WAN
 * emulated in the edges) and in the simulator on those profiles
 * (docs/deploy.md). */
#ifndef HS_VALIDATE_H
#define HS_VALIDATE_H

#include <jansson.h>
#include <stdbool.h>

#include "ccpu.h"
#include "cfg.h"
#include "prof.h"
#include "sweep.h"

#define VAL_PROMPTS 32     /* distinct prompts of the workload */
#define VAL_WAKE_PAUSES 7  /* pauses val_wake times a pass after */

struct val {
	/* With two or more CPUs the verifier (the cloud's GPU) gets the last
	 * one to itself and the edge devices share the others, so that the
	 * two sides do not take each other's time; calibration times each
	 * side on its own CPUs. -1: one CPU, no split. */
	int server_cpu;
	int edge_cpus;              /* the CPUs the edges share */
	bool edges_sleep;           /* edges sleep while they wait even when
				       each has a CPU (else they spin then) */
	struct calib_model tm, dm;  /* target and draft */
	int *text, ntext;           /* the text's tokens */
	int np, nout;               /* prompt and output tokens (largest) */
	int *prompts;               /* (VAL_PROMPTS x np) */
	int *greedy;                /* (VAL_PROMPTS x nout): target's own */
	unsigned char *bits;        /* (VAL_PROMPTS x nout): draft agrees
				       with the target at that output position */
	double stoch[VAL_PROMPTS];  /* alpha_stochastic along each */
	json_t *mean_accepted;      /* E[A] per gamma, measured */
	bool quiet;
	bool quick;                 /* fewer timing repetitions */
	struct prof_edge edge;      /* the draft's measured profile */
	/* the verify shape val_retime times again before each point, and its
	 * time in the calibration's grid */
	int gamma, probe_tokens, probe_ctx;
	double probe_verify_s;
};


/* Loads the target and the draft ("NAME[:QUANT]", defaults f32 and
 * w4a16), the text's tokens, the VAL_PROMPTS prompts of np tokens and the
 * target's greedy continuations of nout tokens; splits the CPUs. budget:
 * the largest batch a point uses. -1 with e's message for a bad model,
 * text or length. */
int val_init(struct val *v, const char *target, const char *draft,
	     const char *text, int np, int nout, int budget, struct err *e);
void val_release(struct val *v);

/* Measures the edge and verify profiles into dir (edge.json, verify.json)
 * and what the points' acceptance profiles need. */
int val_calibrate(struct val *v, const char *dir, int gamma, int budget,
		  const json_t *prov, struct err *e);

/* Times the two costs again, now: the draft's forward pass at the mean
 * context of a request (calib_draft_s, median of VAL_PROBE_PASSES, on the
 * edges' CPU) and
 * the verifier's calibrated probe shape (median of VAL_PROBE_REPS, on its
 * CPU), each over what the profiles made of it (*draft_ratio over the
 * edge profile's fit, *verify_ratio over the grid's time), so that a point
 * is simulated on costs measured seconds before it runs, not minutes: a
 * shared machine drifts between the two by tens of percent. */
void val_retime(struct val *v, double *draft_ratio, double *verify_ratio);

/* Times the deployment's own software path, now, as config c's point
 * would run it: a server as the point's on its CPU, one edge waiting as
 * the point's edges do (polling or sleeping), VAL_PINGS pings through an
 * emulated link of the first group's mean round trip. *stack_s: half the
 * mean of each round trip less the emulated one, what a message spends in
 * the hosts' network stacks and threads (the simulator's wan.stack_s).
 * -1 with e's message when the ping fails. */
int val_stack(struct val *v, const struct cfg *c, double *stack_s,
	      struct err *e);

/* Writes dir/edge.json and dir/verify.json: the profiles of cdir, every
 * draft-step time (the two-token pass's too) times draft_ratio, and with
 * prefill every prefill time too (a ratio the run's own steps set, pauses
 * included: its CPU runs both; a re-timed one is of hot passes, which a
 * prefill after a pause is not), and every verify time times
 * verify_ratio; why says where the ratios come from. */
int val_scaled_profiles(const char *cdir, const char *dir, double draft_ratio,
			bool prefill, double verify_ratio, const char *why,
			struct err *e);

/* The point's acceptance profiles, dir/accept-<g>.json and
 * dir/accept-<g>.bits for each group g: the bits of exactly the prompts its
 * requests use, a line a request, for the simulator's replay by request
 * (docs/config.md). */
int val_accept_profile(struct val *v, const struct cfg *c, const char *dir,
		       const json_t *prov, struct err *e);

/* The run's verifier time over what the verify table (file table, of
 * model) gives for the run's own iterations (pdir/server.json's
 * iteration_log, each at its tokens and mean cached context); 1 without
 * iterations, -1 with e's message when a file cannot be read. */
double val_verify_ratio(const char *pdir, const char *table,
			const char *model, struct err *e);

/* One side's figures at a point. */
struct val_side {
	double itl_s, tokens_per_s, alpha, busy, ttft_s;
	double preemptions;        /* of the cloud's KV cache, a run */
};

struct val_point {
	struct val_side real, sim;
	struct val_side insitu;    /* sim on the costs as they were in the run */
	double retime_draft;       /* val_retime's ratios, before the point: */
	double retime_verify;      /* the profiles it ran on are scaled so */
	double stack_s;            /* val_stack's, before the point */
	/* val_wake's, before the point: after each pause, the extra seconds
	 * of a draft step and of the verifier's probe shape */
	double wake_pause_s[VAL_WAKE_PAUSES];
	double draft_wake_s[VAL_WAKE_PAUSES], verify_wake_s[VAL_WAKE_PAUSES];
	double draft_ratio;        /* the run's draft step over the profile's */
	double verify_ratio;       /* the run's verifier time over the
				      table's for its own iterations */
	double draft_step_s;       /* real: mean wall time of a draft step
				      feeding one token */
	double draft_pair_s;       /* real: the same feeding two (edge.h) */
	double edges_per_cpu;      /* edge processes over the edges' CPUs */
	double edge_demand;        /* sim: the processors the edges keep busy
				      (drafting, prefilling); more than the
				      edges' CPUs and the emulation's edges
				      wait for each other's CPU */
	bool edges_spin;           /* each edge had a CPU and polled, awake */
	long requests, mismatched; /* requests, those not lossless */
	long errors;               /* protocol errors the server saw */
};

/* Times, now, a draft step at the mean context of a request and the
 * verifier's probe shape (val_retime's) back to back and after each of
 * VAL_WAKE_PAUSES pauses from 2.5 to 160 ms, each side on its CPU and
 * waiting as config c's point would (the edges polling or asleep, the
 * server polling when it has a CPU of its own), VAL_WAKE_REPS at each:
 * into p, the extra seconds of a pass after each pause, its median over
 * the back-to-back passes' upper quartile (so that noise alone adds
 * nothing; none below 0), the simulator's device/wake and cloud/gpu/wake. On the
 * shared development machine a verifier iteration of the 656K model took
 * 0.47 ms back to back and 1.5 ms after 80 ms of polling. Where c's edges
 * share a CPU, one edge's pause is not its CPU's (the others run): the
 * draft's extras are 0. */
void val_wake(struct val *v, const struct cfg *c, struct val_point *p);

/* Runs config c for real: forks the server and the edges, waits for them
 * (killing them all after timeout_s), writes their logs to pdir and reads
 * them into p->real, checking every output against the target's own. */
int val_deploy(struct val *v, const struct cfg *c, const char *pdir,
	       double timeout_s, struct val_point *p, struct err *e);

/* Loads point of sw with the seed (< 0: the config's own) and then the
 * extra overrides (may be NULL when n_extra is 0). */
int val_cfg_load(const struct sweep *sw, size_t point, long long seed,
		 char **extra, size_t n_extra, struct cfg *c, struct err *e);

/* The simulator on point of sw with the extra overrides (the profiles),
 * once per seed, into p->sim (means); the first seed's summary is saved
 * in pdir. */
int val_simulate(const struct sweep *sw, size_t point, char **extra,
		 size_t n_extra, const char *pdir, struct val_point *p,
		 struct err *e);

#endif
